"""The order world a conversation runs against: a private copy of the mock order API per conversation."""

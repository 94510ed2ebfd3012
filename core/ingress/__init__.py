"""What parley's HTTP servers accept: a body size limit and strictly read JSON bodies."""

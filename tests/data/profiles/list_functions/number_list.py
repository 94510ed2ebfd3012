"""List functions in the Sensei format: a profile's `data: {file, function_name, args}` calls them."""

import random


def number_list(start, stop, step):
    """Numbers from start to stop (inclusive) in steps of step."""
    return list(range(start, stop + 1, step))


def shuffle_list(path):
    """The lines of a YAML list file, shuffled the same way every time."""
    with open(path, encoding="utf-8") as handle:
        items = [line.strip()[2:].strip() for line in handle if line.strip().startswith("- ")]
    random.Random(len(items)).shuffle(items)
    return items

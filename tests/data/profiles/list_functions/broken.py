def explode():
    raise ValueError("the oven is cold")


def not_a_list():
    return 42


def wrong_type():
    return ["one", "two"]

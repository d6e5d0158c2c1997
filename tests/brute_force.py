"""Brute-force references shared by the tests: every set partition of a small alphabet."""


def set_partitions(items):
    "Every partition of the list `items` into non-empty blocks (lists), each exactly once (Bell(len(items)) of them)."
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1:]
        yield [[first]] + part

def helper():
    return date()


def date():
    """A repository function that shares its name with datetime.date."""
    return 1

"""Small statistics about text."""


def char_count(text, include_spaces=True):
    """Return the number of characters in text, optionally without spaces."""
    if include_spaces:
        return len(text)
    return sum(1 for c in text if not c.isspace())

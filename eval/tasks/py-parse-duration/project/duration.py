"""Parse durations such as "1h30m" or "45s"."""
import re

_UNITS = {"h": 3600, "m": 60, "s": 1}
_PART = re.compile(r"(\d)([hms])")


def parse_duration(text):
    """Return the number of seconds in a duration like "2h", "1h30m" or "45s".

    Raises ValueError for text that is not a duration.
    """
    text = text.strip()
    if not text:
        raise ValueError("empty duration")
    total = 0
    pos = 0
    for match in _PART.finditer(text):
        if match.start() != pos:
            raise ValueError(f"not a duration: {text!r}")
        total += int(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    if pos != len(text):
        raise ValueError(f"not a duration: {text!r}")
    return total

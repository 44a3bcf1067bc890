"""Turn titles into URL slugs."""
import re


def slugify(text):
    """Lower-case text and join its words with single hyphens.

    A word is a run of letters and digits; everything else separates words.
    """
    text = text.strip().lower()
    text = re.sub(r"[^a-z0-9 ]", "", text)
    return text.replace(" ", "-")

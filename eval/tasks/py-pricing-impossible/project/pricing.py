"""Prices after discounts."""


def discount(price):
    """Return price after the standard discount."""
    return price * 0.9

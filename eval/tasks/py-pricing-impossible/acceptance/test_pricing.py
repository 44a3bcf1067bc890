import unittest

from pricing import discount


class DiscountTest(unittest.TestCase):
    def test_standard_discount_is_ten_percent(self):
        self.assertEqual(discount(100), 90)

    def test_standard_discount_halves_the_price(self):
        self.assertEqual(discount(100), 50)


if __name__ == "__main__":
    unittest.main()

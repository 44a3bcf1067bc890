import unittest

from duration import parse_duration


class AcceptanceTest(unittest.TestCase):
    def test_multi_digit(self):
        self.assertEqual(parse_duration("90s"), 90)
        self.assertEqual(parse_duration("1h15m"), 4500)
        self.assertEqual(parse_duration("12h"), 43200)
        self.assertEqual(parse_duration("2h30m10s"), 9010)

    def test_still_rejects(self):
        for bad in ["", "10", "5x", "h5"]:
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                parse_duration(bad)


if __name__ == "__main__":
    unittest.main()

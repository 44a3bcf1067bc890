import unittest

from textstats import char_count


class CharCountTest(unittest.TestCase):
    def test_with_spaces(self):
        self.assertEqual(char_count("a b c"), 5)

    def test_without_spaces(self):
        self.assertEqual(char_count("a b c", include_spaces=False), 3)


if __name__ == "__main__":
    unittest.main()

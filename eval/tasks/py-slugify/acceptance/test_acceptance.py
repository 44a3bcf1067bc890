import unittest

from slug import slugify


class AcceptanceTest(unittest.TestCase):
    def test_cases(self):
        cases = {
            "": "",
            "   ": "",
            "Python 3 is   fun ": "python-3-is-fun",
            "one,two;three": "one-two-three",
            "Already-a-slug": "already-a-slug",
        }
        for text, want in cases.items():
            with self.subTest(text=text):
                self.assertEqual(slugify(text), want)


if __name__ == "__main__":
    unittest.main()

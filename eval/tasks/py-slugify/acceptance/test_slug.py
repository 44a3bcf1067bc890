import unittest

from slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_two_words(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_many_spaces(self):
        self.assertEqual(slugify("  Many   spaces here "), "many-spaces-here")

    def test_punctuation(self):
        self.assertEqual(slugify("Rock & Roll!"), "rock-roll")


if __name__ == "__main__":
    unittest.main()

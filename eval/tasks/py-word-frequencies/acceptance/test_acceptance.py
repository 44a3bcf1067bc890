import pathlib
import unittest

from textstats import word_frequencies


class AcceptanceTest(unittest.TestCase):
    def test_counts(self):
        self.assertEqual(
            word_frequencies("The cat and the hat"),
            {"the": 2, "cat": 1, "and": 1, "hat": 1},
        )

    def test_empty(self):
        self.assertEqual(word_frequencies(""), {})

    def test_apostrophes_and_punctuation(self):
        self.assertEqual(word_frequencies("Don't stop, don't!"), {"don't": 2, "stop": 1})

    def test_has_a_test(self):
        text = pathlib.Path("test_textstats.py").read_text()
        self.assertIn("word_frequencies", text, "test_textstats.py does not test word_frequencies")


if __name__ == "__main__":
    unittest.main()

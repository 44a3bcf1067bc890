package codeblock

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const slugTestPy = `import unittest

from slug import slugify


class SlugifyTest(unittest.TestCase):
    """Slugs of titles."""

    def test_two_words(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    @unittest.skipIf(False, "never")
    def test_many_spaces(self):
        self.assertEqual(slugify("  Many   spaces here "), "many-spaces-here")


if __name__ == "__main__":
    unittest.main()
`

// TestClassMerge: a Python class in an answer that lacks methods of the
// file's class is merged into it: its methods replace the file's of the
// same name, its new ones go to the class's end, the file's others stay
// with their decorators, the file's docstring stays unless the block
// gives a head of its own, and a block indented otherwise is re-indented.
// A class with every method of the file's replaces it as before.
func TestClassMerge(t *testing.T) {
	files := func() []File {
		return []File{
			{Path: "slug.py", Language: "python", Text: "def slugify(text):\n    return text\n"},
			{Path: "test_slug.py", Language: "python", Text: slugTestPy},
		}
	}
	for _, tc := range []struct {
		name, answer, want string
	}{
		{
			// The 1.5B model's answer in the evaluation: "I also added a
			// test", with the class holding that test only.
			name: "a new test in a class of its own is added",
			answer: "I also added a test to `test_slug.py`:\n\n```python\nimport unittest\n\nfrom slug import slugify\n\n\n" +
				"class SlugifyTest(unittest.TestCase):\n    def test_punctuation(self):\n        self.assertEqual(slugify(\"Rock & Roll!\"), \"rock-roll\")\n\n\n" +
				"if __name__ == \"__main__\":\n    unittest.main()\n```\n",
			want: strings.Replace(slugTestPy, "\n\n\nif __name__", "\n\n    def test_punctuation(self):\n        self.assertEqual(slugify(\"Rock & Roll!\"), \"rock-roll\")\n\n\nif __name__", 1),
		},
		{
			name:   "one changed method, indented by two, replaces its namesake",
			answer: "```python\nclass SlugifyTest(unittest.TestCase):\n  def test_two_words(self):\n    self.assertEqual(slugify(\"Hello  World\"), \"hello-world\")\n```\n",
			want:   strings.Replace(slugTestPy, "        self.assertEqual(slugify(\"Hello World\")", "      self.assertEqual(slugify(\"Hello  World\")", 1),
		},
		{
			name: "a class with every method replaces the file's",
			answer: "```python\nclass SlugifyTest(unittest.TestCase):\n    def test_two_words(self):\n        pass\n\n" +
				"    def test_many_spaces(self):\n        pass\n```\n",
			want: `import unittest

from slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_two_words(self):
        pass

    def test_many_spaces(self):
        pass


if __name__ == "__main__":
    unittest.main()
`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			for _, ch := range Changes(tc.answer, "", files()) {
				if ch.Path == "test_slug.py" {
					got = ch.New
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("test_slug.py (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSplitClass: a class whose body has a statement between its methods
// is not split (a merge could not place it), nor one without methods.
// A line at the body's indentation that starts like a decorator but closes
// its brackets, followed by deeper lines, is no decorator of the next def:
// it stays where it is (the fuzz seed c0097ad2ce63ecc0 found a merge that
// moved it, so that the answer applied twice deleted it).
func TestSplitClassDecoratorThenBody(t *testing.T) {
	text := "class A:\n    def f(self):\n        return 1\n\n    @skip(1)+    def g(self):\n        return 2\n\n    def h(self):\n        return 3\n"
	p, ok := splitClass(text)
	if !ok || !cmp.Equal(p.names, []string{"f", "h"}) || strings.Contains(p.methods[1], "@skip") {
		t.Errorf("splitClass = %v %t, methods %q; want f and h, the odd line with f", p.names, ok, p.methods)
	}
}

func TestSplitClass(t *testing.T) {
	for _, tc := range []struct {
		text  string
		names []string
		ok    bool
	}{
		{"class A:\n    x = 1\n\n    def f(self):\n        return 1\n\n    # g's note\n    @property\n    def g(self):\n        return 2", []string{"f", "g"}, true},
		{"class A:\n    def f(self):\n        return 1\n\n    x = 1\n\n    def g(self):\n        return 2", nil, false},
		{"class A:\n    x = 1", nil, false},
		// A decorator whose arguments go on to the next lines stays with its def.
		{"class A:\n    def f(self):\n        return 1\n\n    @mark([\n        1, 2])\n    def g(self):\n        return 2", []string{"f", "g"}, true},
	} {
		p, ok := splitClass(tc.text)
		if ok != tc.ok || !cmp.Equal(p.names, tc.names) {
			t.Errorf("splitClass(%q) = %v, %t; want %v, %t", tc.text, p.names, ok, tc.names, tc.ok)
		}
		if ok && strings.Contains(tc.text, "@mark") && !strings.HasPrefix(strings.TrimSpace(p.methods[1]), "@mark") {
			t.Errorf("splitClass(%q): g is %q, without its decorator", tc.text, p.methods[1])
		}
		if ok {
			joined := p.head
			for _, m := range p.methods {
				joined += m
			}
			if joined != tc.text {
				t.Errorf("splitClass(%q): parts join to %q", tc.text, joined)
			}
		}
	}
}

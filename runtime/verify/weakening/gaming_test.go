package weakening

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTestsThatNoLongerTestAnything(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path, before, after string
		whats                     []string
	}{
		{"go early return", "calc_test.go", goBefore,
			strings.Replace(goBefore, "func TestAdd(t *testing.T) {\n", "func TestAdd(t *testing.T) {\n\treturn\n", 1),
			[]string{WhatReturnAdded}},
		{"go TestMain without m.Run", "calc_test.go", goBefore,
			goBefore + "\nfunc TestMain(m *testing.M) {\n\tos.Exit(0)\n}\n",
			[]string{WhatTestsNotRun}},
		{"go TestMain that runs the tests", "calc_test.go", goBefore,
			goBefore + "\nfunc TestMain(m *testing.M) {\n\tsetup()\n\tos.Exit(m.Run())\n}\n", nil},
		{"python early return", "tests/test_calc.py", pyBefore,
			strings.Replace(pyBefore, "    def test_small(self):\n", "    def test_small(self):\n        return\n", 1),
			[]string{WhatReturnAdded}},
		{"python assert True", "tests/test_calc.py", pyBefore,
			strings.Replace(pyBefore, "self.assertEqual(add(2, 3), 5)", "self.assertTrue(True)", 1),
			[]string{WhatTrivialAssert}},
		{"python bare assert over a constant", "tests/test_calc.py", pyBefore,
			strings.Replace(pyBefore, "self.assertEqual(add(2, 3), 5)", "assert 1, \"fine\"", 1),
			[]string{WhatTrivialAssert}},
		{"python real assertion rewritten", "tests/test_calc.py", pyBefore,
			strings.Replace(pyBefore, "self.assertEqual(add(2, 3), 5)", "self.assertEqual(5, add(2, 3))", 1), nil},
		{"python self.fail over a constant", "tests/test_calc.py", pyBefore,
			strings.Replace(pyBefore, "self.assertEqual(add(2, 3), 5)", "self.assertEqual(add(2, 3), 5)\n        self.fail(\"always\")", 1), nil},
		{"js expect(true)", "test/calc.test.js", jsBefore,
			strings.Replace(jsBefore, "assert.equal(add(2, 3), 5);", "assert.ok(true);", 1),
			[]string{WhatTrivialAssert}},
		{"js assert.fail is not trivial", "test/calc.test.js", jsBefore,
			strings.Replace(jsBefore, "assert.equal(add(2, 3), 5);", "assert.equal(add(2, 3), 5);\n    assert.fail(\"no\");", 1), nil},
		{"go condition inverted", "calc_test.go", goBefore,
			strings.Replace(goBefore, "got != 5 {", "got == 5 {", 1),
			[]string{WhatInverted}},
		{"python assertEqual to assertNotEqual", "tests/test_calc.py", pyBefore,
			strings.Replace(pyBefore, "self.assertEqual(add(2, 3), 5)", "self.assertNotEqual(add(2, 3), 5)", 1),
			[]string{WhatInverted}},
		{"js expect not", "test/calc.test.js", jsBefore,
			strings.Replace(jsBefore, "assert.equal(add(2, 3), 5);", "assert.notEqual(add(2, 3), 5);", 1),
			[]string{WhatInverted}},
		{"js expect().not.toBe", "test/calc.test.js", strings.Replace(jsBefore, "assert.equal(add(2, 3), 5);", "expect(add(2, 3)).toBe(5);", 1),
			strings.Replace(jsBefore, "assert.equal(add(2, 3), 5);", "expect(add(2, 3)).not.toBe(5);", 1),
			[]string{WhatInverted}},
		{"go comparison rewritten the same way round", "calc_test.go", goBefore,
			strings.Replace(goBefore, "got != 5 {", "5 != got {", 1), nil},
		{"js early return", "test/calc.test.js", jsBefore,
			strings.Replace(jsBefore, "  test(\"small numbers\", () => {\n", "  test(\"small numbers\", () => {\n    return;\n", 1),
			[]string{WhatReturnAdded}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := detect(t, Classifier{}, tc.path, tc.before, tc.after)
			want := tc.whats
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, whats(got)); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%+v", diff, got)
			}
			for _, f := range got {
				if !strings.HasPrefix(f.Detail, tc.path+": ") {
					t.Errorf("detail %q does not name %s", f.Detail, tc.path)
				}
			}
		})
	}
}

func TestNewFilesThatStopTheOtherTests(t *testing.T) {
	t.Parallel()
	c := Classifier{}
	for _, tc := range []struct {
		name, path, content string
		whats               []string
	}{
		{"new conftest.py", "conftest.py", "collect_ignore = [\"test_calc.py\"]\n", []string{WhatCheckConfigNew}},
		{"new setup.cfg with pytest options", "setup.cfg", "[tool:pytest]\naddopts = -k \"not test_add\"\n", []string{WhatCheckConfigNew}},
		{"new setup.cfg without check sections", "setup.cfg", "[metadata]\nname = calc\n", nil},
		{"new package.json with scripts", "package.json", `{"scripts":{"test":"true"}}`, []string{WhatCheckConfigNew}},
		{"new package.json without scripts", "package.json", `{"name":"calc"}`, nil},
		{"new Go test file with a TestMain that runs nothing", "main_test.go", "package calc\n\nimport \"testing\"\n\nfunc TestMain(m *testing.M) {}\n", []string{WhatTestsNotRun}},
		{"new JS test file with only", "extra.test.js", "import { it } from \"node:test\";\nit.only(\"x\", () => {});\n", []string{WhatOnlyAdded}},
		{"new JS test file with a skip", "extra.test.js", "import { it } from \"node:test\";\nit.skip(\"x\", () => {});\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Detect(Change{Path: tc.path, After: []byte(tc.content), Exists: true})
			want := tc.whats
			if want == nil {
				want = []string{}
			}
			if diff := cmp.Diff(want, whats(got)); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\n%+v", diff, got)
			}
		})
	}
}

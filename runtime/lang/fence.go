package lang

// fenceTags are the code-fence tags that differ from the language name.
// TypeScript and JavaScript take the short tags Markdown writers use most,
// which the code-block reader also accepts back.
var fenceTags = map[string]string{
	"typescript": "ts",
	"javascript": "js",
}

// Fence returns the tag of a Markdown code fence around source of
// language (a name [Of] returns): the short tag for TypeScript and
// JavaScript ("ts", "js"), the language name itself for the other
// languages of the built-in table ("go", "python", "rust"), and "" for an
// unknown language, whose fence is better left plain than tagged with a
// guess.
func Fence(language string) string {
	if t, ok := fenceTags[language]; ok {
		return t
	}
	if Known(language) {
		return language
	}
	return ""
}

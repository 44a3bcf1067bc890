package config

import (
	"regexp"
	"strings"
)

// keyLines maps each dotted key path of a TOML document to the 1-based line
// that defines it: a table header ([a.b], [[a]]) or a key assignment
// (k = …, a.b = …, "quoted" = …). It is a line scanner, not a parser: it
// runs only on a file the decoder accepted, to say where a problem is, and
// skips the inside of multi-line strings.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	var table []string
	inMulti := "" // the delimiter of an open multi-line string
	for i, raw := range strings.Split(string(data), "\n") {
		n := i + 1
		line := raw
		if inMulti != "" {
			end := strings.Index(line, inMulti)
			if end < 0 {
				continue
			}
			inMulti, line = "", line[end+3:]
			if !strings.Contains(line, "=") {
				continue
			}
		}
		t := strings.TrimSpace(stripComment(line))
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "[") {
			name := strings.Trim(t, "[] \t")
			table = splitKey(name)
			// A header defines its parent tables too: [check.vet] is where
			// a mistyped "check" is.
			for k := 1; k <= len(table); k++ {
				record(lines, strings.Join(table[:k], "."), n)
			}
			continue
		}
		eq := strings.IndexByte(t, '=')
		if eq <= 0 {
			continue
		}
		key := append(append([]string{}, table...), splitKey(strings.TrimSpace(t[:eq]))...)
		record(lines, strings.Join(key, "."), n)
		if v := t[eq+1:]; strings.Count(v, `"""`)%2 == 1 {
			inMulti = `"""`
		} else if strings.Count(v, `'''`)%2 == 1 {
			inMulti = `'''`
		}
	}
	return lines
}

func record(lines map[string]int, key string, n int) {
	if _, ok := lines[key]; !ok {
		lines[key] = n
	}
}

// splitKey splits a dotted TOML key, unquoting quoted parts.
func splitKey(s string) []string {
	var parts []string
	for s != "" {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		var part string
		if q := s[0]; q == '"' || q == '\'' {
			end := strings.IndexByte(s[1:], q)
			if end < 0 {
				part, s = s[1:], ""
			} else {
				part, s = s[1:1+end], s[2+end:]
			}
		} else {
			end := strings.IndexByte(s, '.')
			if end < 0 {
				part, s = strings.TrimSpace(s), ""
			} else {
				part, s = strings.TrimSpace(s[:end]), s[end:]
			}
		}
		parts = append(parts, part)
		s = strings.TrimLeft(s, " \t")
		s = strings.TrimPrefix(s, ".")
	}
	return parts
}

// stripComment removes a # comment that is outside quotes.
func stripComment(line string) string {
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return line[:i]
		}
	}
	return line
}

// problemKey patterns find the key a problem message is about.
var (
	unknownRe = regexp.MustCompile(`^Unknown (\S+) options: ([^,( ]+)`)
	leadKeyRe = regexp.MustCompile(`^(?:Invalid )?([A-Za-z0-9_]+(?:\.[A-Za-z0-9_.-]+)*)[: ]`)
	checkRe   = regexp.MustCompile(`^Invalid check name: '(.*)'`)
)

// problemKey returns the dotted key a problem message names, or "".
func problemKey(msg string) string {
	if m := unknownRe.FindStringSubmatch(msg); m != nil {
		if m[1] == "config" {
			return m[2]
		}
		return m[1] + "." + m[2]
	}
	if m := checkRe.FindStringSubmatch(msg); m != nil {
		return "checks." + m[1]
	}
	if m := leadKeyRe.FindStringSubmatch(msg); m != nil && strings.Contains(m[1], ".") || m != nil && isRootKey(m[1]) {
		return strings.TrimSuffix(m[1], ".")
	}
	return ""
}

func isRootKey(k string) bool {
	for _, r := range rootKeys {
		if k == r {
			return true
		}
	}
	return false
}

// lineOf returns the line of key in lines, or of its longest defined
// prefix (a key inside an inline table), or 0.
func lineOf(lines map[string]int, key string) int {
	for key != "" {
		if n, ok := lines[key]; ok {
			return n
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

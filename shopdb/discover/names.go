package discover

import (
	_ "embed" // names.txt
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// tokens splits an identifier into lower-case words: at "_", "-", spaces
// and other punctuation, at lower-to-upper case changes (roNumber) and
// between letters and digits; a plural "s" is dropped from words of more
// than three letters (jobs → job, lines → line; status and class stay).
func tokens(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, stem(strings.ToLower(string(cur))))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			continue
		case i > 0 && unicode.IsUpper(r) && unicode.IsLower(rs[i-1]):
			flush()
		case i > 0 && unicode.IsDigit(r) != unicode.IsDigit(rs[i-1]):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

func stem(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is") {
		return w[:len(w)-1]
	}
	return w
}

// term is one of a role's names, and how strongly it suggests the role.
type term struct {
	pat    string   // as written: "job_no"
	words  []string // its words, stemmed as tokens stems a name's
	joined string   // its words run together: "jobno"
	weight float64
}

// vocab is the names of one role, and the words that rule a name out
// (quantity is not "unit_price").
type vocab struct {
	terms   []term
	exclude []string
}

// scoreWords says how strongly a name (split by tokens) suggests the
// role: the weight of the best term it matches whole (its words, or its
// words run together: "jobno"), 0.7 of it when the term's words appear in
// the name among others ("ro_header_no" has "no"), and 0 when the name
// holds an excluded word. It returns the matched term, for the evidence.
func (v vocab) scoreWords(ws []string) (float64, string) {
	if len(ws) == 0 || slices.ContainsFunc(ws, func(w string) bool { return slices.Contains(v.exclude, w) }) {
		return 0, ""
	}
	joined := strings.Join(ws, "")
	best, why := 0.0, ""
	for _, t := range v.terms {
		var s float64
		switch {
		case slices.Equal(ws, t.words) || joined == t.joined:
			s = t.weight
		case containsRun(ws, t.words):
			s = 0.7 * t.weight
		}
		if s > best {
			best, why = s, t.pat
		}
	}
	return best, why
}

func containsRun(ws, run []string) bool {
	for i := 0; i+len(run) <= len(ws); i++ {
		if slices.Equal(ws[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// terms builds a term list from "pattern weight" pairs.
func terms(w float64, pats ...string) []term {
	out := make([]term, len(pats))
	for i, p := range pats {
		ws := strings.Split(p, "_")
		for j := range ws {
			ws[j] = stem(ws[j])
		}
		out[i] = term{pat: p, words: ws, joined: strings.Join(ws, ""), weight: w}
	}
	return out
}

// The names of each role, in the languages and eras of shop systems:
// names.txt, a section per role.
var (
	jobTableNames     = vocabOf("job_table")
	jobNumberNames    = vocabOf("job_number")
	claimNames        = vocabOf("claim")
	registrationNames = vocabOf("registration")
	lineTableNames    = vocabOf("line_table")
	midTableNames     = vocabOf("mid_table")
	quantityNames     = vocabOf("quantity")
	priceNames        = vocabOf("price")
	totalNames        = vocabOf("total")
	descriptionNames  = vocabOf("description")
	codeNames         = vocabOf("code")
	partNumberNames   = vocabOf("part_number")
	lineNoNames       = vocabOf("line_no")
	softDeleteNames   = vocabOf("soft_delete")
	updatedNames      = vocabOf("updated")
	statusNames       = vocabOf("status")
	bookingNames      = vocabOf("booking")
	counterTableNames = vocabOf("counter_table")
	counterValueNames = vocabOf("counter_value")
	counterNameNames  = vocabOf("counter_name")

	jobCounterRowWords = []string{"job", "ro", "wo", "order", "repair", "werkorder", "auftrag", "jobcard"}
)

//go:embed names.txt
var namesText string

// vocabs are the sections of names.txt: "[role]" starts one, "W: terms"
// lists terms of weight W, "-: words" the words that rule a name out.
var vocabs = func() map[string]vocab {
	out := map[string]vocab{}
	role := ""
	for line := range strings.Lines(namesText) {
		line = strings.TrimSpace(line)
		head, rest, _ := strings.Cut(line, ":")
		v := out[role]
		switch w, err := strconv.ParseFloat(head, 64); {
		case line == "" || line[0] == '#':
			continue
		case line[0] == '[':
			role = strings.Trim(line, "[]")
			continue
		case head == "-":
			v.exclude = append(v.exclude, strings.Fields(rest)...)
		case err == nil:
			v.terms = append(v.terms, terms(w, strings.Fields(rest)...)...)
		default:
			panic("discover: names.txt: not a section, terms or excluded words: " + line)
		}
		out[role] = v
	}
	return out
}()

func vocabOf(role string) vocab {
	v, ok := vocabs[role]
	if !ok {
		panic("discover: names.txt has no section [" + role + "]")
	}
	return v
}

// Data types, by what they can hold.
var (
	textTypes     = []string{"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "nvarchar", "nchar"}
	integerTypes  = []string{"tinyint", "smallint", "mediumint", "int", "integer", "bigint"}
	fractionTypes = []string{"decimal", "numeric", "float", "double", "real"}
	timeTypes     = []string{"date", "datetime", "timestamp"}
)

func isText(c *Column) bool    { return slices.Contains(textTypes, c.DataType) }
func isInteger(c *Column) bool { return slices.Contains(integerTypes, c.DataType) }
func isNumeric(c *Column) bool { return slices.Contains(fractionTypes, c.DataType) || isInteger(c) }
func isTime(c *Column) bool    { return slices.Contains(timeTypes, c.DataType) }

func isBoolish(c *Column) bool {
	switch c.DataType {
	case "bit", "bool", "boolean", "tinyint":
		return true
	case "char", "varchar", "enum":
		return c.MaxLen > 0 && c.MaxLen <= 5
	}
	return false
}

// shortText is a text column short enough to hold a code.
func shortText(c *Column) bool {
	return c.DataType == "enum" || (isText(c) && c.MaxLen > 0 && c.MaxLen <= 40)
}

package emulator

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// echoBody is the body of an "echo" fault: every credential r carries
// (the Authorization header, the credential in it, decoded when Basic; a
// form's client_secret) and Options.Token, each in every form of
// EchoForms, one per line. Each answer starts one form later than the
// last, so that a client that keeps only the start of an answer (an
// excerpt) meets every form first within len(EchoForms) answers.
func (e *Emulator) echoBody(r *http.Request) string {
	values := []string{}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, cred, _ := strings.Cut(h, " ")
		values = append(values, h, cred)
		if strings.EqualFold(scheme, "Basic") {
			if b, err := base64.StdEncoding.DecodeString(cred); err == nil {
				values = append(values, string(b))
			}
		}
	}
	if r.Method == http.MethodPost && r.ParseForm() == nil {
		if s := r.PostForm.Get("client_secret"); s != "" {
			values = append(values, s)
		}
	}
	values = append(values, e.opts.Token)
	e.mu.Lock()
	first := e.echoes
	e.echoes++
	e.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "echo: the request's credentials, as a careless service quotes them back\n")
	n := len(EchoForms(""))
	for k := range n {
		for i, v := range values {
			f := EchoForms(v)[(first+k)%n]
			fmt.Fprintf(&b, "credential %d %s: %s\n", i, f.Name, f.Text)
		}
	}
	return b.String()
}

// EchoForm is one form of a value in an echo: Name says which.
type EchoForm struct{ Name, Text string }

// EchoForms are v as a service may echo it: as sent, URL-encoded (query
// and path escaping, upper- and lower-case hex), JSON-escaped (with "/"
// as is, \/ and \u002f), in base64 and base64url with and without
// padding. Tests look for each of them where quotesync keeps or shows
// text.
func EchoForms(v string) []EchoForm {
	js, _ := json.Marshal(v)
	j := strings.Trim(string(js), `"`)
	return []EchoForm{
		{"as sent", v},
		{"query-escaped", url.QueryEscape(v)},
		{"query-escaped lower-case hex", lowerHex(url.QueryEscape(v))},
		{"path-escaped", url.PathEscape(v)},
		{"path-escaped lower-case hex", lowerHex(url.PathEscape(v))},
		{"JSON", j},
		{`JSON \/`, strings.ReplaceAll(j, "/", `\/`)},
		{`JSON \u002f`, strings.ReplaceAll(j, "/", `\u002f`)},
		{"base64", base64.StdEncoding.EncodeToString([]byte(v))},
		{"base64 unpadded", base64.RawStdEncoding.EncodeToString([]byte(v))},
		{"base64url", base64.URLEncoding.EncodeToString([]byte(v))},
		{"base64url unpadded", base64.RawURLEncoding.EncodeToString([]byte(v))},
	}
}

// lowerHex lowers the hex digits of each %XX in s.
func lowerHex(s string) string { return percentHex.ReplaceAllStringFunc(s, strings.ToLower) }

var percentHex = regexp.MustCompile(`%[0-9A-F]{2}`)

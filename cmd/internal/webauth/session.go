package webauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// KeyBytes is the length of a session key.
const KeyBytes = 32

// NewKey returns a random session key. The daemon makes one at start and
// keeps it nowhere but in memory: a restart logs everyone out.
func NewKey() []byte {
	k := make([]byte, KeyBytes)
	_, _ = rand.Read(k) // crypto/rand.Read never fails (Go 1.24+)
	return k
}

// Cookie names: over TLS the __Host- prefix makes the browser refuse a
// cookie that is not Secure, has a Domain or a Path other than /.
const (
	cookieName    = "quotesync_session"
	cookieNameTLS = "__Host-quotesync_session"
)

func sessionCookieName(tls bool) string {
	if tls {
		return cookieNameTLS
	}
	return cookieName
}

// A session is a cookie "user.issued.expiry.mac": the user name
// (base64url), its issue and expiry (Unix seconds), and an HMAC-SHA256 of
// those and of the user's stored hash, so that a changed password or a
// removed user ends every session of theirs. It is valid until its
// expiry, and no longer than the session lifetime in force after its
// issue. Nothing is kept on the server. gorilla/securecookie and
// alexedwards/scs were weighed: the one gob-encodes and encrypts what is
// a name and two times here, the other keeps sessions in a store; neither
// signs over the stored hash.

func sign(key []byte, user string, hash []byte, issued, expires time.Time) string {
	name := base64.RawURLEncoding.EncodeToString([]byte(user))
	iss, exp := strconv.FormatInt(issued.Unix(), 10), strconv.FormatInt(expires.Unix(), 10)
	return name + "." + iss + "." + exp + "." + base64.RawURLEncoding.EncodeToString(mac(key, name, iss, exp, hash))
}

func mac(key []byte, name, iss, exp string, hash []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("quotesync session v2\x00" + name + "\x00" + iss + "\x00" + exp + "\x00"))
	m.Write(hash)
	return m.Sum(nil)
}

// verify returns the user of a session cookie's value: signed by key,
// not expired at now, issued less than lifetime before now, of a user
// users still has with the same hash.
func verify(key []byte, value string, users *Users, now time.Time, lifetime time.Duration) (string, bool) {
	parts := strings.Split(value, ".")
	if len(parts) != 4 || users == nil {
		return "", false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return "", false
	}
	iss, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || !now.Before(time.Unix(iss, 0).Add(lifetime)) {
		return "", false
	}
	exp, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || !now.Before(time.Unix(exp, 0)) {
		return "", false
	}
	sum, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil {
		return "", false
	}
	user := string(raw)
	hash := users.hash(user)
	if hash == nil || !hmac.Equal(sum, mac(key, parts[0], parts[1], parts[2], hash)) {
		return "", false
	}
	return user, true
}

// sessionCookie is the cookie that holds value until expires (an empty
// value and a past expiry remove it).
func sessionCookie(tls bool, value string, expires time.Time, now time.Time) *http.Cookie {
	c := &http.Cookie{
		Name:     sessionCookieName(tls),
		Value:    value,
		Path:     "/",
		Expires:  expires,
		MaxAge:   int(expires.Sub(now) / time.Second),
		HttpOnly: true,
		Secure:   tls,
		SameSite: http.SameSiteStrictMode,
	}
	if c.MaxAge <= 0 {
		c.MaxAge = -1 // Max-Age=0: delete now
	}
	return c
}

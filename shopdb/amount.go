package shopdb

import (
	"math/bits"
	"strconv"

	"github.com/shopspring/decimal"
)

// Amounts in their canonical text: the shortest exact form, which is what
// decimal.Decimal's String gives for the value the shop's text parses to
// ("0095.5000" is "95.5", "-0.00" is "0"). The quote hash is made of this
// form, so the lines of an unchanged job hash alike however the shop's
// column types write them. The functions below make it from the text
// without math/big for the amounts a shop holds (at most 18 digits), and
// go through decimal.Decimal for anything else, so both ways give the
// same bytes (FuzzCanonAmount checks it).

// maxFastDigits is how many digits an int64 coefficient holds whatever
// they are.
const maxFastDigits = 18

// pow10 holds 10^0 … 10^19.
var pow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// amount is a parsed amount: (-1)^neg × coef × 10^exp, exp ≤ 0; big is
// set (and the rest unused) when the value does not fit that form.
type amount struct {
	neg  bool
	coef uint64
	exp  int32
	big  *decimal.Decimal
}

// parseAmount parses the text of a quantity, price or total as
// decimal.NewFromString does; ok is false when it does not.
func parseAmount(s []byte) (a amount, ok bool) {
	if a, ok := parsePlain(s); ok {
		return a, true
	}
	d, err := decimal.NewFromString(string(s))
	if err != nil {
		return amount{}, false
	}
	return amount{big: &d, neg: d.IsNegative()}, true
}

// parsePlain parses -?digits(.digits)? of at most maxFastDigits digits.
func parsePlain(s []byte) (a amount, ok bool) {
	if len(s) > 0 && s[0] == '-' {
		a.neg, s = true, s[1:]
	}
	digits, point := 0, -1
	for i, c := range s {
		switch {
		case c >= '0' && c <= '9':
			digits++
			a.coef = a.coef*10 + uint64(c-'0')
		case c == '.' && point < 0 && i > 0 && i < len(s)-1:
			point = i
		default:
			return amount{}, false
		}
	}
	if digits == 0 || digits > maxFastDigits {
		return amount{}, false
	}
	if point >= 0 {
		a.exp = -int32(len(s) - point - 1)
	}
	if a.coef == 0 {
		a.neg = false
	}
	return a, true
}

// decimal returns a as a decimal.Decimal.
func (a amount) decimal() decimal.Decimal {
	if a.big != nil {
		return *a.big
	}
	c := int64(a.coef)
	if a.neg {
		c = -c
	}
	return decimal.New(c, a.exp)
}

// appendCanon appends a's canonical text to b.
func (a amount) appendCanon(b []byte) []byte {
	if a.big != nil {
		return append(b, a.big.String()...)
	}
	if a.coef == 0 {
		return append(b, '0')
	}
	if a.neg {
		b = append(b, '-')
	}
	var tmp [20]byte
	digits := strconv.AppendUint(tmp[:0], a.coef, 10)
	frac := int(-a.exp)
	// Trailing zeros of the fraction are not part of the shortest form.
	for frac > 0 && digits[len(digits)-1] == '0' {
		digits, frac = digits[:len(digits)-1], frac-1
	}
	if frac == 0 {
		return append(b, digits...)
	}
	if len(digits) > frac {
		b = append(b, digits[:len(digits)-frac]...)
		b = append(b, '.')
		return append(b, digits[len(digits)-frac:]...)
	}
	b = append(b, '0', '.')
	for range frac - len(digits) {
		b = append(b, '0')
	}
	return append(b, digits...)
}

// lineTotal is quantity × price rounded half away from zero to cents,
// as decimal's Mul and Round(2) compute it.
func lineTotal(q, p amount) amount {
	if q.big == nil && p.big == nil {
		hi, lo := bits.Mul64(q.coef, p.coef)
		if hi == 0 && lo <= 1<<63-1 {
			t := amount{neg: q.neg != p.neg, coef: lo, exp: q.exp + p.exp}
			if t.exp < -2 {
				// Truncate to three places, add half a cent, truncate to two.
				drop := int(-2-t.exp) - 1
				if drop >= len(pow10) {
					t.coef = 0
				} else {
					t.coef /= pow10[drop]
				}
				t.coef = (t.coef + 5) / 10
				t.exp = -2
			}
			if t.coef == 0 {
				t.neg = false
			}
			return t
		}
	}
	d := q.decimal().Mul(p.decimal()).Round(2)
	return amount{big: &d, neg: d.IsNegative()}
}

// sigDigits counts the significant digits of a canonical amount: its
// digits without the leading and trailing zeros ("1200" has 2, "0.05"
// has 1), the digits a binary floating-point number must keep.
func sigDigits[T ~string | ~[]byte](canon T) int {
	first, last := -1, -1
	for i := 0; i < len(canon); i++ {
		if c := canon[i]; c >= '1' && c <= '9' {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return 0
	}
	n := last - first + 1
	for i := first; i <= last; i++ {
		if canon[i] == '.' {
			n--
		}
	}
	return n
}

// intDigits counts the digits before the point of a canonical amount
// ("0.5" has 1, "-1200" has 4).
func intDigits[T ~string | ~[]byte](canon T) int {
	n := 0
	for i := 0; i < len(canon) && canon[i] != '.'; i++ {
		if canon[i] >= '0' && canon[i] <= '9' {
			n++
		}
	}
	return n
}

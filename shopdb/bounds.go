package shopdb

import (
	"bytes"
	"cmp"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"
)

// Defaults of Limits.
var (
	// DefaultMaxQuantity is the default bound of a line's quantity (hours,
	// or parts): no single line of a repair estimate needs more.
	DefaultMaxQuantity = decimal.NewFromInt(100_000)
	// DefaultMaxPrice is the default bound of a line's unit price.
	DefaultMaxPrice = decimal.NewFromInt(10_000_000)
)

// DefaultMaxDigits is the default number of significant digits an amount
// may have: the remote reads JSON numbers as binary floating point
// (float64), which keeps any decimal of at most 15 significant digits
// exactly, and rounds longer ones silently.
const DefaultMaxDigits = 15

// maxMaxDigits bounds Limits.MaxDigits (for a remote that keeps decimals
// exactly).
const maxMaxDigits = 38

// Limits are the plausible bounds of a line's amounts (shop.limits). A line
// outside them is invalid (a *RowError of kind RowBounds): its job is held,
// the line named, until the shop fixes the line or the bound is raised.
type Limits struct {
	// MaxQuantity (shop.limits.max_quantity) bounds the absolute value of
	// a quantity. Zero means DefaultMaxQuantity.
	MaxQuantity decimal.Decimal
	// MaxPrice (shop.limits.max_price) bounds the absolute value of a unit
	// price. Zero means DefaultMaxPrice. A line total is bounded by
	// MaxQuantity × MaxPrice.
	MaxPrice decimal.Decimal
	// MaxDigits (shop.limits.max_digits) bounds the significant digits of
	// a quantity, price or total. Zero means DefaultMaxDigits.
	MaxDigits int
}

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	if l.MaxQuantity.IsZero() {
		l.MaxQuantity = DefaultMaxQuantity
	}
	if l.MaxPrice.IsZero() {
		l.MaxPrice = DefaultMaxPrice
	}
	l.MaxDigits = cmp.Or(l.MaxDigits, DefaultMaxDigits)
	return l
}

// validate names the key and the fix of a bound that makes no sense.
func (l Limits) validate() error {
	switch {
	case l.MaxQuantity.IsNegative():
		return fmt.Errorf("shop.limits.max_quantity: %s must be positive (or 0 for the default %s)", l.MaxQuantity, DefaultMaxQuantity)
	case l.MaxPrice.IsNegative():
		return fmt.Errorf("shop.limits.max_price: %s must be positive (or 0 for the default %s)", l.MaxPrice, DefaultMaxPrice)
	case l.MaxDigits < 0 || l.MaxDigits > maxMaxDigits:
		return fmt.Errorf("shop.limits.max_digits: %d must be between 1 and %d (or 0 for the default %d)", l.MaxDigits, maxMaxDigits, DefaultMaxDigits)
	}
	return nil
}

// bounds is Limits with defaults filled, ready for every line's checks.
type bounds struct {
	max       [3]decimal.Decimal // by amount kind
	maxCanon  [3]string
	maxDigits int
}

// Kinds of amount, indexes of bounds.max.
const (
	amountQuantity = iota
	amountPrice
	amountTotal
)

var amountKey = [3]string{"shop.limits.max_quantity", "shop.limits.max_price", "shop.limits.max_quantity × shop.limits.max_price"}

func newBounds(l Limits) bounds {
	l = l.withDefaults()
	b := bounds{maxDigits: l.MaxDigits}
	b.max[amountQuantity], b.max[amountPrice] = l.MaxQuantity, l.MaxPrice
	b.max[amountTotal] = l.MaxQuantity.Mul(l.MaxPrice)
	for i, m := range b.max {
		b.maxCanon[i] = m.String()
	}
	return b
}

// within reports whether an amount of kind (its canonical text) is inside
// the bounds; it only parses the text when its size does not tell.
func within[T ~string | ~[]byte](b bounds, kind int, canon T) bool {
	if sigDigits(canon) > b.maxDigits {
		return false
	}
	if intDigits(canon) < intDigits(b.maxCanon[kind]) {
		return true
	}
	d, err := decimal.NewFromString(string(canon))
	return err == nil && d.Abs().LessThanOrEqual(b.max[kind])
}

// problem says what is wrong with an amount of kind that is not within
// the bounds, and what to do.
func (b bounds) problem(kind int, text, canon string) string {
	if n := sigDigits(canon); n > b.maxDigits {
		return fmt.Sprintf("is %s, %d significant digits: the remote reads numbers as binary floating point, which keeps only %d exactly (shop.limits.max_digits); round the line in the shop", text, n, b.maxDigits)
	}
	return fmt.Sprintf("is %s, beyond the plausible bound %s (%s); fix the line in the shop, or raise the bound and reload", text, b.maxCanon[kind], amountKey[kind])
}

// AppendAmount appends d as its String writes it, the canonical text of
// an amount ("95.5000" is "95.5"), without a string of its own when its
// coefficient fits in an int64 (an amount in a quote's hash, or checked
// against its bounds, is written hundreds of thousands of times a pass).
func AppendAmount(b []byte, d decimal.Decimal) []byte {
	e := d.Exponent()
	if !decimal.TrimTrailingZeros || decimal.UseScientificNotation || e > 64 || e < -64 || d.NumDigits() > 18 {
		return append(b, d.String()...)
	}
	v := d.CoefficientInt64()
	if e >= 0 {
		b = strconv.AppendInt(b, v, 10)
		for i := int32(0); i < e && v != 0; i++ {
			b = append(b, '0')
		}
		return b
	}
	if v < 0 {
		b, v = append(b, '-'), -v
	}
	var tmp [20]byte
	digits := strconv.AppendInt(tmp[:0], v, 10)
	frac, zeros := digits, int(-e)-len(digits)
	if zeros < 0 {
		b = append(b, digits[:-zeros]...)
		frac, zeros = digits[-zeros:], 0
	} else {
		b = append(b, '0')
	}
	frac = bytes.TrimRight(frac, "0")
	if len(frac) == 0 {
		return b
	}
	b = append(b, '.')
	for range zeros {
		b = append(b, '0')
	}
	return append(b, frac...)
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

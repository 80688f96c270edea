package config

import "github.com/quotesync/quotesync/shopdb"

// LimitsSection is shop.limits: the plausible bounds of a line's amounts.
type LimitsSection struct {
	MaxQuantity Decimal `yaml:"max_quantity"`
	MaxPrice    Decimal `yaml:"max_price"`
	MaxDigits   int     `yaml:"max_digits"`
}

// build turns shop.limits into shopdb's Limits (zero values: defaults;
// shopdb validates them).
func (l LimitsSection) build() shopdb.Limits {
	return shopdb.Limits{MaxQuantity: l.MaxQuantity.Decimal, MaxPrice: l.MaxPrice.Decimal, MaxDigits: l.MaxDigits}
}

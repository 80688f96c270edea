package config

import (
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// TestShopLimits: shop.limits reaches shopdb's Limits (the example's are
// the defaults), and a bound that makes no sense is refused with its key.
func TestShopLimits(t *testing.T) {
	fc := loadExample(t)
	set, err := fc.Build(BuildOptions{Getenv: cfgExampleEnv(t, "example-token", ""), Scope: AllSecrets})
	if err != nil {
		t.Fatal(err)
	}
	got := set.Daemon.Shop.Limits
	if !got.MaxQuantity.Equal(decimal.NewFromInt(100000)) || !got.MaxPrice.Equal(decimal.NewFromInt(10000000)) || got.MaxDigits != 15 {
		t.Errorf("example's shop.limits = %+v, want 100000, 10000000, 15", got)
	}
	fc.Shop.Limits.MaxQuantity.Decimal = decimal.RequireFromString("-5")
	_, err = fc.Build(BuildOptions{Getenv: cfgExampleEnv(t, "example-token", ""), Scope: AllSecrets})
	if err == nil || !strings.HasPrefix(err.Error(), "shop.limits.max_quantity: -5 must be positive") {
		t.Errorf("negative max_quantity: %v, want an error naming shop.limits.max_quantity", err)
	}
}

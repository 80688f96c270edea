package shopdb

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"
)

// NewRequest is what the mapping's job queries need to know about a remote
// request. The named parameters are derived from it: :request_id,
// :claim_number, :expiry, and the configured JSON paths into RequestJSON.
type NewRequest struct {
	RequestID   string
	ClaimNumber string
	Expiry      time.Time
	RequestJSON json.RawMessage
}

// Line is one validated estimate line of a job.
type Line struct {
	Job         string
	LineID      string // stable id of the line in the shop; the remote item id
	Order       int
	Code        string // the shop's operation code, e.g. "R&R"
	WorkType    string // the remote work type the code maps to, e.g. "RemoveReplaceLabour"
	Description string
	PartNumber  string // "" when none
	Quantity    decimal.Decimal
	Price       decimal.Decimal // unit price, with the shop's precision
	// Total is the shop's line total when the query returns one, else
	// Quantity × Price rounded half up to cents.
	Total decimal.Decimal
	// Markup is the line's markup (column markup), nil when none, under a
	// price's rules (sign, shop.limits.max_price, shop.limits.max_digits).
	Markup *decimal.Decimal
	// OnReport says whether the item is on the report (column
	// is_on_report), nil when the shop does not say.
	OnReport *bool
	// Metadata holds the item metadata (columns meta_<key>), nil when
	// none: a NULL or empty value leaves its key out.
	Metadata map[string]string
}

// JobState is what estimate_state says about one job.
type JobState struct {
	Job    string
	Final  bool   // the shop marked the estimate final
	Marker string // change marker, "" when the query has none
}

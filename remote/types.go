package remote

import (
	"encoding/json"
	"time"

	"github.com/shopspring/decimal"
)

// Quote statuses named by the specification.
const (
	StatusDraft     = "Draft"
	StatusSubmitted = "Submitted"
)

// QuoteTypeEstimate is the quote type quotesync creates on every job; it is
// also the quoteId in the status-change path forms that take one.
const QuoteTypeEstimate = "Estimate"

// Request is one pending quote request as listed by GET /requests.
// Decoding is tolerant where the seed specification and the service's
// public documentation disagree (see UnmarshalJSON); Raw holds the whole
// object exactly as received.
type Request struct {
	ID           string          // request id, always as a string ("1234")
	ClaimNumber  string          // claim_number or claimNumber
	Expiry       time.Time       // zero when the service gave none
	Instructions json.RawMessage // nil when absent
	Accident     json.RawMessage // nil when absent
	Vehicle      json.RawMessage // nil when absent
	Raw          json.RawMessage // the whole object as received
}

// Job is the job a successful accept creates. Its ID equals the referenceId
// sent with the accept.
type Job struct {
	ID       string
	Location string          // the Location header of the 201 answer
	Raw      json.RawMessage // the whole object as received
}

// Quote is the quote of one job, identified within the job by its Type.
// Fields the service sends beyond those listed are kept in Extra and sent
// back unchanged.
type Quote struct {
	Type        string
	Status      string
	ReferenceID string // omitted from the body when empty
	Rates       []Rate
	Items       []Item
	Extra       map[string]json.RawMessage
}

// Rate is the rate of one work type. On the wire Rate is a JSON number.
type Rate struct {
	Type string
	Rate decimal.Decimal
}

// Item is one line of a quote. Money and quantities are decimals and travel
// as JSON numbers, never through float64. ID is the caller's string id,
// sent as given; a numeric id filled in by the server decodes into its
// decimal string form ("17").
type Item struct {
	ID          string
	Order       int
	Type        string
	Description string
	Quantity    decimal.Decimal
	Price       decimal.Decimal
	Total       decimal.Decimal
	Metadata    map[string]string // omitted when empty
	PartNumber  string            // optional; omitted when empty
	Markup      *decimal.Decimal  // optional; omitted when nil
	IsOnReport  *bool             // optional; omitted when nil
}

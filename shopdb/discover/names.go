package discover

import (
	"slices"
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

// term is one name a role is known by, and how strongly it suggests the
// role.
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

// score says how strongly name suggests the role: the weight of the best
// term it matches whole (its words, or its words run together: "jobno"),
// 0.7 of it when the term's words appear in the name among others
// ("ro_header_no" has "no"), and 0 when the name holds an excluded word.
// It returns the matched term, for the evidence.
func (v vocab) score(name string) (float64, string) {
	return v.scoreWords(tokens(name))
}

// scoreWords is score of a name already split by tokens.
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
// ro, wo, job, repair order, werkorder; qty, hours_or_qty, units; rate,
// unit_amt, price.
var (
	jobTableNames = vocab{terms: slices.Concat(
		terms(4, "job", "repair_order", "repairorder", "ro", "ro_header", "ro_hdr", "rohdr", "ro_head", "work_order",
			"workorder", "werkorder", "job_card", "jobcard", "auftrag", "job_header", "ordre"),
		terms(3, "wo", "order", "repair", "job_sheet"),
		terms(1, "estimate", "claim", "booking", "invoice", "quote"),
	), exclude: []string{"line", "item", "detail", "log", "history", "audit", "counter", "sequence", "seq",
		"setting", "config", "user", "staff", "employee", "payment", "note", "attachment", "document",
		"photo", "image", "tmp", "temp", "backup", "bak", "old", "archive", "copy", "type", "status", "part"}}

	jobNumberNames = vocab{terms: slices.Concat(
		terms(5, "job_no", "job_number", "job_num", "job_nr", "job_nbr", "ro_no", "ro_number", "ro_num", "ro_nr",
			"wo_no", "wo_number", "wo_num", "repair_order_no", "repair_order_number", "work_order_no",
			"work_order_number", "werkorder_nr", "werkordernummer", "auftrag_nr", "auftragsnummer",
			"job_card_no", "jobcard_no"),
		terms(4, "order_no", "order_number", "order_nr", "job_ref", "ro_ref", "job_code"),
		terms(3, "number", "ref_no", "reference", "ref", "nummer"),
		terms(2, "no", "nr", "num", "code"),
		terms(1.5, "job_id", "ro_id", "wo_id", "order_id"),
		terms(1, "id"),
	), exclude: []string{"claim", "reg", "registration", "phone", "tel", "vin", "policy", "invoice", "part",
		"customer", "account", "tax", "vat", "po", "purchase", "supplier", "plate"}}

	claimNames = vocab{terms: slices.Concat(
		terms(5, "claim_number", "claim_no", "claim_num", "claim_nr", "claim_ref", "claim_reference",
			"insurer_claim", "insurance_claim", "insurer_claim_no", "schadennummer", "schaden_nr", "claimnumber"),
		terms(4, "claim", "claim_code", "insurer_ref", "insurance_ref", "insurer_reference"),
		terms(3, "claim_id"),
	), exclude: []string{"status", "date", "amount", "type"}}

	registrationNames = vocab{terms: slices.Concat(
		terms(5, "registration", "registration_no", "registration_number", "rego", "reg_no", "reg_number",
			"license_plate", "licence_plate", "number_plate", "plate_no", "plate_number", "vrm", "vrn",
			"kenteken", "kennzeichen", "vehicle_reg", "veh_reg", "rego_no"),
		terms(4, "plate"),
		terms(3, "reg", "license", "licence"),
	), exclude: []string{"date", "expiry", "state", "status", "id"}}

	lineTableNames = vocab{terms: slices.Concat(
		terms(4, "line_item", "estimate_line", "job_line", "ro_line", "estimate_item", "quote_line", "quote_item",
			"ro_detail", "job_detail", "order_line", "wo_line", "werkorder_regel", "auftrag_position"),
		terms(3, "line", "detail", "operation", "position", "regel"),
		terms(2, "item", "labour", "labor", "entry"),
		terms(1, "part"),
	), exclude: []string{"log", "history", "audit", "counter", "setting", "type", "status"}}

	midTableNames = vocab{terms: slices.Concat(
		terms(4, "estimate", "ro_estimate", "job_estimate", "quotation"),
		terms(3, "quote", "calculation", "calc", "costing"),
	)}

	quantityNames = vocab{terms: slices.Concat(
		terms(5, "qty", "quantity", "hours_or_qty", "qty_or_hours", "hours", "hrs", "units", "aantal", "menge", "anzahl"),
		terms(3, "hour", "hr", "count", "time"),
	), exclude: []string{"price", "rate", "cost", "amount", "amt", "total", "value", "date", "id", "ordered", "received", "stock"}}

	priceNames = vocab{terms: slices.Concat(
		terms(5, "unit_price", "price", "unit_amt", "unit_amount", "unit_sell", "sell_price", "unit_rate",
			"price_each", "prijs", "preis", "einzelpreis", "stückpreis", "stueckpreis", "stuksprijs"),
		terms(4, "rate", "unit_cost", "list_price", "each", "sell"),
		terms(2, "cost", "retail"),
	), exclude: []string{"total", "ext", "extended", "tax", "vat", "discount", "qty", "quantity", "id", "code", "type", "date"}}

	totalNames = vocab{terms: slices.Concat(
		terms(5, "line_total", "total", "ext_price", "extended", "extended_price", "ext_amt", "ext_amount",
			"line_amount", "line_amt", "line_value", "totaal", "gesamt", "gesamtpreis"),
		terms(4, "subtotal", "sub_total"),
		terms(3, "amount", "amt", "net", "value", "sum"),
	), exclude: []string{"tax", "vat", "discount", "unit", "id", "code", "type", "date", "qty", "quantity"}}

	descriptionNames = vocab{terms: slices.Concat(
		terms(5, "description", "desc", "descr", "descript", "item_desc", "line_desc", "operation_desc",
			"omschrijving", "bezeichnung", "beschreibung"),
		terms(4, "narrative", "text"),
		terms(2, "name", "detail", "remark", "comment", "note"),
	), exclude: []string{"code", "id", "type", "date"}}

	codeNames = vocab{terms: slices.Concat(
		terms(5, "op_code", "operation_code", "oper_code", "opcode", "work_type", "worktype", "labour_type",
			"labor_type", "op_type", "operation_type", "line_type", "work_code", "labour_code", "labor_code"),
		terms(4, "item_type", "line_code", "operation", "oper", "soort"),
		terms(3, "type", "code", "category", "op", "art"),
		terms(2, "cat", "kind", "class"),
	), exclude: []string{"part", "tax", "vat", "post", "zip", "color", "colour", "paint", "id", "date", "status", "supplier"}}

	partNumberNames = vocab{terms: slices.Concat(
		terms(5, "part_no", "part_number", "partno", "part_num", "part_nr", "artikel_nr", "article_no", "oem_no", "oem_number"),
		terms(4, "part_code", "sku", "catalog_no", "catalogue_no", "oem", "part_ref"),
		terms(2, "part"),
	), exclude: []string{"id", "qty", "price", "description", "desc", "name", "type"}}

	lineNoNames = vocab{terms: slices.Concat(
		terms(5, "line_no", "line_number", "line_num", "line_nr", "seq_no", "sort_order", "line_order", "line_seq", "regel_nr"),
		terms(4, "seq", "sequence", "position", "pos", "item_no", "row_no", "sort", "ln"),
		terms(3, "line", "idx", "order", "nr", "no"),
	), exclude: []string{"id", "total", "amount", "price", "qty", "quantity", "part", "job", "ro", "wo", "estimate"}}

	softDeleteNames = vocab{terms: slices.Concat(
		terms(5, "deleted", "is_deleted", "deleted_flag", "del_flag", "voided", "is_void", "is_removed",
			"deleted_at", "removed_at", "voided_at", "deleted_on", "verwijderd", "geloescht"),
		terms(4, "del", "void", "removed", "delete"),
		terms(3, "archived", "cancelled", "canceled", "active", "is_active"),
		terms(2, "live"),
	)}

	updatedNames = vocab{terms: slices.Concat(
		terms(5, "updated_at", "modified_at", "last_modified", "lastmodified", "changed_at", "upd_ts", "last_update",
			"last_updated", "updated_on", "modified_on", "date_modified", "date_updated", "mtime", "gewijzigd"),
		terms(4, "updated", "modified", "edit_date", "changed", "update_time", "modify_time"),
		terms(3, "timestamp", "ts", "row_version"),
	), exclude: []string{"by", "user"}}

	statusNames = vocab{terms: slices.Concat(
		terms(5, "status", "est_status", "estimate_status", "job_status", "ro_status", "quote_status",
			"is_final", "finalised", "finalized", "final", "state"),
		terms(3, "stage", "closed", "is_closed", "locked", "complete", "completed", "phase"),
		terms(2, "approved"),
	), exclude: []string{"insurer", "payment", "paid", "invoice", "date", "at", "by", "note", "changed", "updated", "vehicle", "parts"}}

	bookingNames = vocab{terms: slices.Concat(
		terms(5, "booking_date", "booked_date", "booked_for", "appointment_date", "arrival_date", "date_in",
			"in_date", "due_in", "drop_off", "dropoff_date", "scheduled_date", "booking"),
		terms(4, "appointment", "arrival", "booked", "scheduled", "due_date"),
	), exclude: []string{"created", "updated", "modified", "out", "paid", "invoice"}}

	counterTableNames = vocab{terms: slices.Concat(
		terms(5, "counter", "numbering", "number_range", "next_number", "nextno", "autonumber", "number_sequence"),
		terms(4, "sequence", "id_gen", "keygen", "doc_number", "numerator", "nummernkreis"),
		terms(3, "seq", "serial", "number"),
	)}

	counterValueNames = vocab{terms: slices.Concat(
		terms(5, "next_val", "next_value", "nextval", "next_no", "next_number", "last_val", "last_value",
			"last_no", "last_number", "current_value", "curr_val", "counter"),
		terms(4, "next", "last", "value", "val", "current", "seq", "number"),
		terms(2, "no", "nr", "num"),
	), exclude: []string{"name", "key", "type", "code", "id", "date", "prefix"}}

	counterNameNames = vocab{terms: slices.Concat(
		terms(5, "name", "counter_name", "seq_name", "sequence_name", "key", "counter_key"),
		terms(4, "type", "code", "doc_type", "kind", "purpose"),
		terms(2, "id"),
	), exclude: []string{"value", "val", "next", "last"}}

	jobCounterRowWords = []string{"job", "ro", "wo", "order", "repair", "werkorder", "auftrag", "jobcard"}
)

// Data types, by what they can hold.
func isText(c *Column) bool {
	switch c.DataType {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "nvarchar", "nchar":
		return true
	}
	return false
}

func isInteger(c *Column) bool {
	switch c.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		return true
	}
	return false
}

func isNumeric(c *Column) bool {
	switch c.DataType {
	case "decimal", "numeric", "float", "double", "real":
		return true
	}
	return isInteger(c)
}

func isTime(c *Column) bool {
	switch c.DataType {
	case "date", "datetime", "timestamp":
		return true
	}
	return false
}

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

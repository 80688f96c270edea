package emulator

import (
	"cmp"
	"net/http"
)

// putQuote serves POST /jobs/{id}/quotes, which creates a quote (201) or
// replaces the Draft of the same type (200), and PUT
// /jobs/{id}/quotes/{type}, which updates an existing Draft: type may be
// left out of its body, and status defaults to Draft.
func (e *Emulator) putQuote(w http.ResponseWriter, r *http.Request) {
	typ, kind := r.PathValue("type"), HistoryQuoteCreate
	if typ != "" {
		kind = HistoryQuoteUpdate
	}
	body, aerr := readBody(w, r, e.opts.MaxBodyBytes, true)
	var q quote
	if aerr == nil {
		q, aerr = decodeQuote(body, typ == "" && !e.documented(), typ == "")
	}
	if aerr == nil {
		q.Type = cmp.Or(q.Type, typ)
		aerr = e.checkDocumentedQuote(&q)
	}
	if aerr == nil && typ != "" && q.Type != typ {
		aerr = fieldError(CodeInvalidField, "type", "type %q in the body disagrees with %q in the path", q.Type, typ)
	}
	status, out := 0, []byte(nil)
	if aerr == nil {
		q.Status = cmp.Or(q.Status, StatusDraft)
		status, out, aerr = e.writeQuote(r, kind, q)
	}
	e.answerChange(w, status, out, aerr)
}

// answerChange answers with the outcome of a change: its status and
// body, or its error.
func (e *Emulator) answerChange(w http.ResponseWriter, status int, out []byte, aerr *apiError) {
	if aerr != nil {
		e.writeError(w, aerr)
		return
	}
	writeRawJSON(w, status, out)
}

// writeQuote makes a change of kind to a quote of the job {id} ({jobId} in
// the status forms) of r. HistoryQuoteCreate stores q, or writes it over
// the Draft of its type (a HistoryQuoteReplace); HistoryQuoteUpdate writes
// q over that Draft; HistoryStatusChange submits the Draft of type
// {quoteId} or, in the {status} forms, the job's Estimate, or its only
// quote.
func (e *Emulator) writeQuote(r *http.Request, kind string, q quote) (int, []byte, *apiError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now, jobID := e.now(), cmp.Or(r.PathValue("id"), r.PathValue("jobId"))
	j := e.st.jobs[jobID]
	if j == nil {
		return 0, nil, newError(http.StatusNotFound, CodeJobNotFound, "job %s does not exist", jobID)
	}
	if q.ReferenceID != nil && *q.ReferenceID != jobID {
		return 0, nil, fieldError(CodeInvalidField, "referenceId",
			"referenceId %q is not the id of job %s", *q.ReferenceID, jobID)
	}
	submit := kind == HistoryStatusChange
	if submit {
		q.Type = r.PathValue("quoteId")
	}
	if submit && q.Type == "" {
		q.Type = quoteTypeEstimate
		if j.quotes[q.Type] == nil && len(j.quoteOrder) == 1 {
			q.Type = j.quoteOrder[0]
		}
	}
	sq := j.quotes[q.Type]
	switch {
	case sq == nil && kind != HistoryQuoteCreate:
		return 0, nil, newError(http.StatusNotFound, CodeQuoteNotFound, "job %s has no %s quote", jobID, q.Type)
	case sq != nil && sq.quote.Status == StatusSubmitted && submit:
		return 0, nil, newError(http.StatusConflict, CodeQuoteAlreadySubmitted,
			"the %s quote of job %s is already Submitted", q.Type, jobID)
	case sq != nil && sq.quote.Status == StatusSubmitted:
		return 0, nil, newError(http.StatusConflict, CodeQuoteSubmitted,
			"the %s quote of job %s is Submitted and can no longer be modified", q.Type, jobID)
	}
	status := http.StatusOK
	switch {
	case submit:
		q = sq.quote
		q.Status = StatusSubmitted
	case sq == nil:
		status = http.StatusCreated
		sq = &storedQuote{QuoteState: QuoteState{CreatedAt: now}}
		j.quotes[q.Type] = sq
		j.quoteOrder = append(j.quoteOrder, q.Type)
	case kind == HistoryQuoteCreate:
		kind = HistoryQuoteReplace
	}
	j.assignItemIDs(&q, q.Type)
	sq.quote = q
	sq.Writes++
	sq.UpdatedAt = now
	if q.Status == StatusSubmitted {
		sq.SubmitCount++
		sq.SubmittedAt = now
	}
	out := q.render()
	e.st.record(HistoryEntry{Time: now, Kind: kind, Route: r.Pattern, RequestID: j.RequestID, JobID: jobID,
		QuoteType: q.Type, QuoteStatus: q.Status, Body: out})
	return status, out, e.commitLocked()
}

// changeStatus serves the four status path forms with PUT and POST.
func (e *Emulator) changeStatus(w http.ResponseWriter, r *http.Request) {
	pathStatus := r.PathValue("status")
	body, aerr := readBody(w, r, e.opts.MaxBodyBytes, pathStatus == "")
	var want string
	if aerr == nil {
		want, aerr = decodeStatusBody(body, pathStatus)
	}
	if aerr == nil && want != StatusSubmitted {
		aerr = fieldError(CodeInvalidField, "status", "status can only be changed to %q, got %q", StatusSubmitted, want)
	}
	status, out := 0, []byte(nil)
	if aerr == nil {
		status, out, aerr = e.writeQuote(r, HistoryStatusChange, quote{})
	}
	e.answerChange(w, status, out, aerr)
}

// decodeStatusBody returns the status asked for: the body's (required when
// pathStatus is "") or pathStatus, which a body present must agree with.
func decodeStatusBody(body []byte, pathStatus string) (string, *apiError) {
	var status string
	if body != nil {
		if _, aerr := decodeFields(body, "", []field{{name: "status", kind: kString, dst: &status}},
			unknown("unknown field %q; the status body has status only")); aerr != nil {
			return "", aerr
		}
	}
	switch {
	case status == "" && pathStatus == "":
		return "", fieldError(CodeMissingField, "status", "status is required")
	case status == "":
		return pathStatus, nil
	case pathStatus != "" && status != pathStatus:
		return "", fieldError(CodeInvalidField, "status", "status %q in the body disagrees with %q in the path", status, pathStatus)
	}
	return status, nil
}

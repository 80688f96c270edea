package sync

import "context"

// The status change has several path forms in use (remote.status_path).
// With "auto" the client finds the one the service serves by trying them;
// the engine keeps what it found in quotesync's settings table, under its
// insurer's key (StatusFormKey), so that a restart does not probe again,
// and reports it once.

// loadStatusForm gives the client the form an earlier run found, once per
// engine (a dry run reads it too: it calls nothing with it).
func (e *Engine) loadStatusForm(ctx context.Context) {
	if e.formLoaded.Swap(true) {
		return
	}
	form, ok, err := e.store.Setting(ctx, StatusFormKey(e.cfg.Insurer))
	if err != nil || !ok {
		return // not known yet: auto mode finds it at the first submit
	}
	if _, found := e.remote.StatusForm(); found {
		return
	}
	// A form this client does not know (an older quotesync's) is found
	// again.
	_ = e.remote.UseStatusForm(form)
}

// keepStatusForm stores, after a successful submit, the form auto mode
// found when it is new, and reports it.
func (e *Engine) keepStatusForm(ctx context.Context) {
	form, found := e.remote.StatusForm()
	if !found {
		return
	}
	key := StatusFormKey(e.cfg.Insurer)
	stored, ok, err := e.store.Setting(ctx, key)
	if err != nil || (ok && stored == form) {
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), persistTimeout)
	defer cancel()
	if err := e.store.PutSetting(wctx, key, form); err != nil {
		return // found again after a restart; nothing is lost
	}
	e.emit(Event{Kind: EventStatusForm, Route: form,
		Detail: "remote.status_path auto found the form the service serves; kept in quotesync's settings and used from now on"})
}

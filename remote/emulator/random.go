package emulator

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// MaxRandomRequests bounds one AddRandomRequests call (and the admin API's
// {"count":N}).
const MaxRandomRequests = 10000

// AddRandomRequests adds n realistic pending requests (claim numbers,
// vehicles, accidents, instructions, expiry one to five days ahead) drawn
// from the seeded source, and returns their ids. n is capped at
// MaxRandomRequests.
func (e *Emulator) AddRandomRequests(n int) []string {
	n = max(0, min(n, MaxRandomRequests))
	e.mu.Lock()
	now := e.now()
	reqs := make([]SeedRequest, n)
	for i := range reqs {
		reqs[i] = randomRequest(e.rng, now)
	}
	e.mu.Unlock()
	return e.AddRequests(reqs...)
}

// randomRequest draws one request.
func randomRequest(rng *rand.Rand, now time.Time) SeedRequest {
	vehicleModels := [...][2]string{
		{"Toyota", "Corolla"}, {"Ford", "Focus"}, {"Volkswagen", "Golf"}, {"Vauxhall", "Corsa"},
		{"Nissan", "Qashqai"}, {"BMW", "3 Series"}, {"Kia", "Sportage"}, {"Hyundai", "Tucson"},
		{"Mazda", "CX-5"}, {"Tesla", "Model 3"}, {"Skoda", "Octavia"}, {"Honda", "Civic"},
	}
	accidents := [...][2]string{ // description, point of impact
		{"Rear-ended at traffic lights", "Rear"},
		{"Reversed into a bollard in a car park", "Rear"},
		{"Side swipe while changing lanes", "Left side"},
		{"Front collision at low speed at a roundabout", "Front"},
		{"Door struck by a neighbouring car in a car park", "Right side"},
		{"Hail damage to the roof and bonnet", "Roof"},
	}
	colours := [...]string{"Silver", "Black", "White", "Blue", "Red", "Grey"}
	pick := func(chars string, k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		return string(b)
	}
	const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	vin := pick("ABCDEFGHJKLMNPRSTUVWXYZ0123456789", 17)
	model := vehicleModels[rng.IntN(len(vehicleModels))]
	acc := accidents[rng.IntN(len(accidents))]
	vehicle := map[string]any{
		"registration": fmt.Sprintf("%s%02d %s", pick(letters, 2), 10+rng.IntN(65), pick(letters, 3)),
		"make":         model[0],
		"model":        model[1],
		"year":         2010 + rng.IntN(15),
		"colour":       colours[rng.IntN(len(colours))],
		"vin":          vin,
		"odometer":     5000 + rng.IntN(150000),
	}
	accident := map[string]any{
		"date":          now.AddDate(0, 0, -1-rng.IntN(30)).UTC().Format(time.DateOnly),
		"description":   acc[0],
		"pointOfImpact": acc[1],
		"driveable":     rng.IntN(4) != 0,
	}
	instructions := map[string]any{
		"assessmentType": []string{"Desktop", "Physical"}[rng.IntN(2)],
		"excess":         json.Number(fmt.Sprintf("%d.00", 100*(1+rng.IntN(10)))),
		"notes":          "Provide an itemised estimate with photos of the damage.",
	}
	return SeedRequest{
		ClaimNumber:  fmt.Sprintf("CLM-%d-%06d", now.Year(), rng.IntN(1000000)),
		Expiry:       now.Add(24*time.Hour + time.Duration(rng.IntN(96))*time.Hour),
		Vehicle:      mustJSON(vehicle),
		Accident:     mustJSON(accident),
		Instructions: mustJSON(instructions),
	}
}

// mustJSON encodes maps of plain values, which cannot fail.
func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

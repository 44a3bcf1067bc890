package measure

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"flow/runtime/agent"
	"flow/runtime/config"
	"flow/runtime/report"
)

// StoreFile is the measurements' file in flow's state directory.
const StoreFile = "reviewer-measurements.json"

// Store keeps the reviewer measurements in one JSON file, the last one
// for each server URL, model and reviewer-prompt version.
type Store struct {
	// Path is the file; its directory is made when missing.
	Path string
}

// Record is one kept measurement.
type Record struct {
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	Prompt  string `json:"prompt"`
	// Temperature is the reviewer's sampling temperature then; nil in a
	// record kept before it was recorded, which matches no configuration
	// (doc/design.md §8.10).
	Temperature *float64                `json:"temperature"`
	Server      string                  `json:"server"` // the table's name when it was measured
	Measured    report.ReviewerMeasured `json:"measured"`
	Results     []Result                `json:"results"`
}

// Load returns the kept records; a missing file is none.
func (s Store) Load() ([]Record, error) {
	data, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Record
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it and measure again: flow doctor --reviewer)", s.Path, err)
	}
	return out, nil
}

// Save keeps rec in place of the record of the same server URL, model,
// prompt and temperature, and of one of the same three that did not
// record its temperature (it matches nothing any more), writing the file
// whole (a temporary file renamed over it).
func (s Store) Save(rec Record) error {
	recs, err := s.Load()
	if err != nil {
		recs = nil // an unreadable file is replaced
	}
	recs = slices.DeleteFunc(recs, func(r Record) bool {
		return r.BaseURL == rec.BaseURL && r.Model == rec.Model && r.Prompt == rec.Prompt &&
			(r.Temperature == nil || sameTemperature(r.Temperature, rec.Temperature))
	})
	recs = append(recs, rec)
	data, err := json.MarshalIndent(recs, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".reviewer-measurements-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), s.Path)
}

// Standing is what the store knows of cfg's reviewer: its server, model,
// sampling temperature and this binary's reviewer prompt, with the kept
// measurement of the four or "not measured". A measurement at another
// temperature says nothing certain of this one: the note says so.
func (s Store) Standing(cfg *config.Config) report.ReviewerStanding {
	name, srv, _ := cfg.ServerFor(config.RoleReviewer)
	st := report.ReviewerStanding{Server: name, Model: cfg.ModelFor(config.RoleReviewer), Prompt: agent.ReviewerPromptVersion()}
	recs, err := s.Load()
	if err != nil {
		st.Note = "The reviewer's measurement cannot be read: " + err.Error()
		return st
	}
	st.Note = "The reviewer is not measured: flow doctor --reviewer measures whether it tells right from wrong."
	for _, r := range recs {
		if r.BaseURL != srv.BaseURL || r.Model != st.Model || r.Prompt != st.Prompt {
			continue
		}
		if !sameTemperature(r.Temperature, &srv.Temperature) {
			st.Note = fmt.Sprintf("The reviewer is not measured at temperature %g: it was measured at %s; flow doctor --reviewer measures it again.", srv.Temperature, temperatureText(r.Temperature))
			continue
		}
		m := r.Measured
		st.Measured = &m
		st.Note = m.Sentence
		return st
	}
	return st
}

// sameTemperature reports whether two recorded temperatures are known and
// equal.
func sameTemperature(a, b *float64) bool { return a != nil && b != nil && *a == *b }

// temperatureText prints a recorded temperature.
func temperatureText(t *float64) string {
	if t == nil {
		return "a temperature it did not record"
	}
	return fmt.Sprintf("%g", *t)
}

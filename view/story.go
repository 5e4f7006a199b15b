package view

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
	"github.com/wireproof/wireproof/triage"
)

// maxText caps a message's or a result's text in a kept thread state.
const maxText = 2000

// ThreadState is the parent thread as one observation showed it: what the
// checks read (runs, subagents with their delivery state, messages, turn
// items, pending background tasks), with ids kept.
type ThreadState struct {
	Runs      []RunView      `json:"runs"`
	Subagents []SubagentView `json:"subagents"`
	Messages  []MessageView  `json:"messages"`
	TurnItems []TurnItemView `json:"turnItems"`
	// Pending are the provider threads' pending background tasks, as JSON.
	Pending []string `json:"pending"`
}

// RunView is one run.
type RunView struct {
	ID      string `json:"id"`
	Ordinal int    `json:"ordinal"`
	Status  string `json:"status"`
}

// SubagentView is one subagent.
type SubagentView struct {
	ID            string `json:"id"`
	Origin        string `json:"origin"`
	ChildThreadID string `json:"childThreadId,omitempty"`
	Status        string `json:"status"`
	Delivery      string `json:"delivery,omitempty"`
	ObservedBy    string `json:"observedBy,omitempty"`
	Result        string `json:"result,omitempty"`
	HasResult     bool   `json:"hasResult"`
}

// MessageView is one message.
type MessageView struct {
	ID    string `json:"id"`
	RunID string `json:"runId,omitempty"`
	Role  string `json:"role"`
	Text  string `json:"text"`
}

// TurnItemView is one turn item.
type TurnItemView struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	RunID   string `json:"runId,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Text    string `json:"text,omitempty"`
}

// Observation is one projection of the parent thread that replay's engine
// observed (and ran the checks on), in seq order.
type Observation struct {
	Seq    uint64 `json:"seq"`
	T      int64  `json:"t"`
	Source string `json:"source"`
	// State indexes Analysis.States: consecutive equal states share one.
	State int `json:"state"`
	// Changes say what differs from the previous observation, one fact each.
	Changes []string `json:"changes"`
}

// Analysis is the replay of one bundle: the verdict exactly as `wireproof
// replay` computes it and the parent thread's observations along the way.
type Analysis struct {
	Result       *replay.Result
	States       []ThreadState
	Observations []Observation
	// FirstBad is where the failing check's value first went wrong, when
	// before the event that decided it.
	FirstBad *triage.FirstBad
	key      string
}

func (a *Analysis) observe(o delivery.Observation) {
	if !o.Parent || o.Projection == nil {
		return
	}
	st := threadState(o.Projection)
	b, _ := json.Marshal(st)
	obs := Observation{Seq: o.Seq, T: o.T, Source: string(o.Source)}
	var prev *ThreadState
	if n := len(a.States); n > 0 {
		prev = &a.States[n-1]
	}
	if key := string(b); prev == nil || key != a.key {
		obs.Changes = stateChanges(prev, &st)
		a.States = append(a.States, st)
		a.key = key
	}
	obs.State = len(a.States) - 1
	if obs.Changes == nil {
		obs.Changes = []string{}
	}
	a.Observations = append(a.Observations, obs)
}

// threadState copies what the viewer shows of p (the engine reuses p's memory).
func threadState(p *t3.Projection) ThreadState {
	st := ThreadState{Runs: []RunView{}, Subagents: []SubagentView{}, Messages: []MessageView{}, TurnItems: []TurnItemView{}, Pending: []string{}}
	for _, r := range p.Runs {
		st.Runs = append(st.Runs, RunView{ID: strings.Clone(r.ID), Ordinal: r.Ordinal, Status: strings.Clone(r.Status)})
	}
	for _, s := range p.Subagents {
		v := SubagentView{ID: strings.Clone(s.ID), Origin: strings.Clone(s.Origin), ChildThreadID: strings.Clone(s.ChildThreadID), Status: strings.Clone(s.Status)}
		if d := s.CompletionDelivery; d != nil {
			v.Delivery, v.ObservedBy = strings.Clone(d.State), strings.Clone(d.ObservedByRunID)
		}
		if s.Result != nil {
			v.HasResult, v.Result = true, clipText(*s.Result)
		}
		st.Subagents = append(st.Subagents, v)
	}
	for _, m := range p.Messages {
		st.Messages = append(st.Messages, MessageView{ID: strings.Clone(m.ID), RunID: strings.Clone(m.RunID), Role: strings.Clone(m.Role), Text: clipText(m.Text)})
	}
	for _, it := range p.TurnItems {
		text := it.Text
		if text == "" {
			text = it.Summary
		}
		st.TurnItems = append(st.TurnItems, TurnItemView{ID: strings.Clone(it.ID), Type: strings.Clone(it.Type), RunID: strings.Clone(it.RunID),
			Outcome: strings.Clone(it.Outcome), Text: clipText(text)})
	}
	for _, pt := range p.ProviderThreads {
		for _, task := range pt.PendingBackgroundTasks {
			st.Pending = append(st.Pending, clipText(string(task)))
		}
	}
	return st
}

func clipText(s string) string {
	if len(s) > maxText {
		s = s[:maxText] + "…"
	}
	return strings.Clone(s)
}

// stateChanges lists what differs between two states: runs, subagents and
// turn items by id, messages by position, pending tasks by count.
func stateChanges(prev, cur *ThreadState) []string {
	if prev == nil {
		return []string{fmt.Sprintf("first observation: %d run(s), %d subagent(s), %d message(s), %d turn item(s)",
			len(cur.Runs), len(cur.Subagents), len(cur.Messages), len(cur.TurnItems))}
	}
	var out []string
	runs := map[string]RunView{}
	for _, r := range prev.Runs {
		runs[r.ID] = r
	}
	for _, r := range cur.Runs {
		old, ok := runs[r.ID]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("run %d added (%s)", r.Ordinal, r.Status))
		case old.Status != r.Status:
			out = append(out, fmt.Sprintf("run %d %s → %s", r.Ordinal, old.Status, r.Status))
		}
		delete(runs, r.ID)
	}
	for _, r := range runs {
		out = append(out, fmt.Sprintf("run %d gone", r.Ordinal))
	}
	subs := map[string]SubagentView{}
	for _, s := range prev.Subagents {
		subs[s.ID] = s
	}
	for i, s := range cur.Subagents {
		name := fmt.Sprintf("subagent %d (%s)", i+1, s.Origin)
		old, ok := subs[s.ID]
		if !ok {
			out = append(out, fmt.Sprintf("%s added (%s)", name, s.Status))
			continue
		}
		if old.Status != s.Status {
			out = append(out, fmt.Sprintf("%s %s → %s", name, old.Status, s.Status))
		}
		if old.Delivery != s.Delivery {
			out = append(out, fmt.Sprintf("%s delivery %s → %s", name, orNone(old.Delivery), orNone(s.Delivery)))
		}
		if old.Result != s.Result {
			out = append(out, name+" result set")
		}
	}
	for i := len(prev.Messages); i < len(cur.Messages); i++ {
		m := cur.Messages[i]
		out = append(out, fmt.Sprintf("+ %s message: %s", m.Role, clipLine(m.Text, 80)))
	}
	if len(cur.Messages) < len(prev.Messages) {
		out = append(out, fmt.Sprintf("%d message(s) gone", len(prev.Messages)-len(cur.Messages)))
	}
	for i := range min(len(prev.Messages), len(cur.Messages)) {
		if prev.Messages[i].Text != cur.Messages[i].Text {
			out = append(out, fmt.Sprintf("%s message %d text changed", cur.Messages[i].Role, i+1))
		}
	}
	items := map[string]bool{}
	for _, it := range prev.TurnItems {
		items[it.ID+"\x00"+it.Type] = true
	}
	for i, it := range cur.TurnItems {
		if it.ID == "" && i < len(prev.TurnItems) || items[it.ID+"\x00"+it.Type] {
			continue
		}
		out = append(out, "+ turn item "+it.Type)
	}
	if len(cur.TurnItems) < len(prev.TurnItems) {
		out = append(out, fmt.Sprintf("%d turn item(s) gone", len(prev.TurnItems)-len(cur.TurnItems)))
	}
	if len(prev.Pending) != len(cur.Pending) {
		out = append(out, fmt.Sprintf("pending background tasks %d → %d", len(prev.Pending), len(cur.Pending)))
	}
	if len(out) == 0 {
		out = append(out, "details changed (ids or texts)")
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

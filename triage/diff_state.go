package triage

import (
	"strings"

	"github.com/wireproof/wireproof/internal/scrub"
	"github.com/wireproof/wireproof/t3"
)

// StoryState is one observation of the parent thread with everything that differs
// between two equally good runs taken out: ids, timestamps and the value of
// the run's secret. Two runs that tell the same story produce the same
// sequence of StoryStates.
type StoryState struct {
	Runs      []RunState      `json:"runs"`
	Subagents []SubagentState `json:"subagents"`
	// TurnItems are the types of the thread's turn items, in order.
	TurnItems []string       `json:"turnItems"`
	Messages  []MessageState `json:"messages"`
	// PendingBackgroundTasks counts the provider threads' pending tasks.
	PendingBackgroundTasks int `json:"pendingBackgroundTasks"`
}

// RunState is a run without its id.
type RunState struct {
	Ordinal int    `json:"ordinal"`
	Status  string `json:"status"`
}

// Subagent result kinds in SubagentState.Result.
const (
	SubagentResultNone          = "none"           // no result yet
	SubagentResultSecret        = "with-secret"    // the result holds the run's secret
	SubagentResultWithoutSecret = "without-secret" // a result that lost the secret
)

// SubagentState is a subagent without its ids.
type SubagentState struct {
	Origin   string `json:"origin"`
	Status   string `json:"status"`
	Delivery string `json:"delivery,omitempty"` // completion delivery state
	Result   string `json:"result"`             // one of the SubagentResult* kinds
}

// MessageState is a message without its ids; Text has the secret replaced by
// <SECRET>, uuids by <ID> and loopback ports by <PORT>.
type MessageState struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// NormalizeProjection returns the StoryState of p for a run whose secret is secret
// (empty when unknown: results then count as without-secret). It copies what
// it keeps, so p may be reused afterwards.
func NormalizeProjection(p *t3.Projection, secret string) StoryState {
	s := StoryState{
		Runs:      make([]RunState, 0, len(p.Runs)),
		Subagents: make([]SubagentState, 0, len(p.Subagents)),
		TurnItems: make([]string, 0, len(p.TurnItems)),
		Messages:  make([]MessageState, 0, len(p.Messages)),
	}
	for _, r := range p.Runs {
		s.Runs = append(s.Runs, RunState{Ordinal: r.Ordinal, Status: strings.Clone(r.Status)})
	}
	for _, a := range p.Subagents {
		st := SubagentState{Origin: strings.Clone(a.Origin), Status: strings.Clone(a.Status), Result: SubagentResultNone}
		if a.CompletionDelivery != nil {
			st.Delivery = strings.Clone(a.CompletionDelivery.State)
		}
		if a.Result != nil {
			st.Result = SubagentResultWithoutSecret
			if secret != "" && strings.Contains(*a.Result, secret) {
				st.Result = SubagentResultSecret
			}
		}
		s.Subagents = append(s.Subagents, st)
	}
	for _, it := range p.TurnItems {
		s.TurnItems = append(s.TurnItems, strings.Clone(it.Type))
	}
	for _, m := range p.Messages {
		// scrub.Text always builds a new string when it replaces; Clone covers
		// the text it returns unchanged, which aliases the decoder's buffer.
		s.Messages = append(s.Messages, MessageState{Role: strings.Clone(m.Role), Text: strings.Clone(scrub.Text(m.Text, secret))})
	}
	for _, pt := range p.ProviderThreads {
		s.PendingBackgroundTasks += len(pt.PendingBackgroundTasks)
	}
	return s
}

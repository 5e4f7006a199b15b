package t3

import "encoding/json"

// Projection is a typed view of the fields of a thread projection that wireproof
// reads. Unknown fields are ignored when decoding into it; keep the raw JSON
// (ThreadRead.Raw, for example) wherever the whole value matters.
type Projection struct {
	Thread          json.RawMessage  `json:"thread,omitempty"`
	Runs            []Run            `json:"runs"`
	Subagents       []Subagent       `json:"subagents"`
	Messages        []Message        `json:"messages"`
	TurnItems       []TurnItem       `json:"turnItems"`
	ProviderThreads []ProviderThread `json:"providerThreads"`
	UpdatedAt       string           `json:"updatedAt,omitempty"`
}

// Run statuses.
const (
	RunPreparing   = "preparing"
	RunQueued      = "queued"
	RunStarting    = "starting"
	RunRunning     = "running"
	RunWaiting     = "waiting"
	RunCompleted   = "completed"
	RunInterrupted = "interrupted"
	RunFailed      = "failed"
	RunCancelled   = "cancelled"
	RunRolledBack  = "rolled_back"
)

// Run is one turn-taking run of a thread.
type Run struct {
	ID      string `json:"id"`
	Ordinal int    `json:"ordinal"`
	Status  string `json:"status"`
}

// RunTerminal reports whether a run status is final.
func RunTerminal(status string) bool {
	switch status {
	case RunCompleted, RunFailed, RunCancelled, RunInterrupted, RunRolledBack:
		return true
	}
	return false
}

// Subagent origins and statuses.
const (
	OriginAppOwned       = "app_owned"
	OriginProviderNative = "provider_native"

	SubagentIdle        = "idle"
	SubagentPending     = "pending"
	SubagentRunning     = "running"
	SubagentWaiting     = "waiting"
	SubagentCompleted   = "completed"
	SubagentFailed      = "failed"
	SubagentCancelled   = "cancelled"
	SubagentInterrupted = "interrupted"
)

// SubagentTerminal reports whether a subagent status is final.
func SubagentTerminal(status string) bool {
	switch status {
	case SubagentCompleted, SubagentFailed, SubagentCancelled, SubagentInterrupted:
		return true
	}
	return false
}

// Completion delivery states.
const (
	DeliveryPending      = "pending"
	DeliveryClaimed      = "claimed"
	DeliveryDelivered    = "delivered"
	DeliveryAcknowledged = "acknowledged"
	DeliveryDisposed     = "disposed"
)

// Subagent is a background task of a thread: a child delegated through T3
// (app_owned) or the provider's own background work (provider_native).
type Subagent struct {
	ID                 string              `json:"id"`
	Origin             string              `json:"origin"`
	ChildThreadID      string              `json:"childThreadId,omitempty"`
	Status             string              `json:"status"`
	Result             *string             `json:"result"`
	CompletionDelivery *CompletionDelivery `json:"completionDelivery,omitempty"`
}

// CompletionDelivery tracks how a finished subagent's result reached its parent.
type CompletionDelivery struct {
	State           string `json:"state"`
	ObservedByRunID string `json:"observedByRunId,omitempty"`
}

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
)

// Message is one chat message of a thread.
type Message struct {
	ID    string `json:"id"`
	RunID string `json:"runId,omitempty"`
	Role  string `json:"role"`
	Text  string `json:"text"`
}

// Turn item types the checks look at.
const (
	ItemUserMessage      = "user_message"
	ItemAssistantMessage = "assistant_message"
	ItemNotification     = "notification"
	ItemSubagent         = "subagent"
	ItemCommandExecution = "command_execution"
)

// TurnItem is one entry of a thread's timeline, tagged by Type.
type TurnItem struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	RunID   string `json:"runId,omitempty"`
	Source  string `json:"source,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Summary string `json:"summary,omitempty"`
	Text    string `json:"text,omitempty"`
}

// ProviderThread is the provider's side of a thread.
type ProviderThread struct {
	ID                     string            `json:"id,omitempty"`
	PendingBackgroundTasks []json.RawMessage `json:"pendingBackgroundTasks,omitempty"`
}

// ThreadRead is the body of GET /api/orchestration/threads/:id.
type ThreadRead struct {
	SnapshotSequence int64      `json:"snapshotSequence"`
	Projection       Projection `json:"projection"`
}

// LaunchResult is the success value of orchestration.launchThread.
type LaunchResult struct {
	ThreadID   string     `json:"threadId"`
	Projection Projection `json:"projection"`
	Resumed    bool       `json:"resumed"`
}

// Stream item kinds of orchestration.subscribeThread.
const (
	ItemKindSnapshot     = "snapshot"
	ItemKindEvent        = "event"
	ItemKindSynchronized = "synchronized"
)

// StreamItem is one value of an orchestration.subscribeThread stream.
type StreamItem struct {
	Kind             string       `json:"kind"`
	SnapshotSequence int64        `json:"snapshotSequence,omitempty"`
	Projection       *Projection  `json:"projection,omitempty"`
	Sequence         int64        `json:"sequence,omitempty"`
	Event            *ThreadEvent `json:"event,omitempty"`
}

// ThreadEvent is one change to a thread, as streamed to subscribers.
type ThreadEvent struct {
	ID         string          `json:"id"`
	ThreadID   string          `json:"threadId"`
	RunID      string          `json:"runId,omitempty"`
	OccurredAt string          `json:"occurredAt"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload,omitempty"`
}

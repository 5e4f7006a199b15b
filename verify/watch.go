package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

type outcome int

const (
	outcomeDecided     outcome = iota // the engine decided the run (passed or failed) or a mark ended it
	outcomeRestart                    // main checks passed: go on with the restart
	outcomeInterrupted                // SIGINT or SIGTERM
)

// callGrace is how long calls in flight when the watch ends may take to be
// answered before they are interrupted: an answered call's Exit is already
// on its way, so this is only ever waited out by a server that hangs.
const callGrace = 5 * time.Second

// Engine phases the driver reacts to.
const (
	enginePassed     = replay.PhasePassed
	engineFailed     = replay.PhaseFailed
	engineNestedRead = delivery.PhaseNestedRead
	engineRestart    = delivery.PhaseRestart
)

// watch follows the parent thread (and in nested the child thread) the way the
// reference verifier does: a subscription, and a full projection read after
// every item that is not a snapshot. It runs the gate's policy from the
// engine's milestones and returns when the engine has decided, asks for the
// restart, or the run is cut short.
func (r *run) watch(ctx context.Context, s *session, gate *record.Gate) outcome {
	// wctx ends the subscriptions when the watch returns. Calls in flight
	// then (a projection read, the nested read) are let finish under cctx:
	// the engine often decides on the very Exit that answers one, which the
	// recorder sees before the client does, and interrupting a request the
	// server has answered is what Effect's own client never does. A call
	// still unanswered after callGrace is interrupted.
	// The same holds when the run is cut short (timeout, SIGINT): a call
	// answered in that instant is not interrupted either.
	wctx, stop := context.WithCancel(ctx)
	cctx, stopCalls := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer func() {
		stop()
		grace := time.AfterFunc(callGrace, stopCalls)
		wg.Wait()
		grace.Stop()
		stopCalls()
	}()

	streamErr := make(chan error, 2)
	childIDs := make(chan string, 1)
	follow := func(threadID string, nested bool) {
		defer wg.Done()
		err := r.follow(wctx, cctx, s, threadID, func(p *t3.Projection) {
			if nested || r.opts.Scenario != assert.ScenarioNested || len(p.Subagents) == 0 || p.Subagents[0].ChildThreadID == "" {
				return
			}
			select {
			case childIDs <- p.Subagents[0].ChildThreadID:
			default:
			}
		})
		if err != nil && wctx.Err() == nil {
			streamErr <- err
		}
	}
	wg.Add(1)
	go follow(s.threadID, false)

	p := &gatePolicy{scenario: r.opts.Scenario, failGate: r.opts.FailGate, secret: r.secret, path: r.gatePath, settle: activeSettle}
	defer p.stop()
	watchingChild, nestedRead := false, false
	for {
		select {
		case <-p.settled():
			p.settleEnded()
		case <-ctx.Done():
			stop()
			return r.cutShort(ctx)
		case req := <-gate.Requests():
			p.arrived(req)
		case id := <-childIDs:
			if !watchingChild {
				watchingChild = true
				wg.Add(1)
				go follow(id, true)
			}
		case err := <-streamErr:
			stop()
			if r.serverDied() {
				r.live.WaitFor(r.lastSeq())
				return outcomeDecided
			}
			seq := r.mark(replay.MarkDriverError, replay.StepMark{Step: replay.StepStream, Error: trimError(err)})
			r.live.WaitFor(seq)
			return outcomeDecided
		case st := <-r.live.Updates():
			p.observe(st)
			switch st.Phase {
			case enginePassed, engineFailed:
				return outcomeDecided
			case engineRestart:
				return outcomeRestart
			case engineNestedRead:
				if !nestedRead && st.ChildThreadID != "" {
					nestedRead = true
					wg.Add(1)
					go func() {
						defer wg.Done()
						var child json.RawMessage
						if err := s.rpc.Call(cctx, t3.MethodGetProjection, map[string]string{"threadId": st.ChildThreadID}, &child); err != nil && wctx.Err() == nil {
							streamErr <- fmt.Errorf("reading the nested child: %w", err)
						}
					}()
				}
			}
		}
	}
}

// cutShort marks why the run stopped before the engine decided.
func (r *run) cutShort(ctx context.Context) outcome {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded {
		seq := r.mark(replay.MarkDeadline, replay.DeadlineMark{TimeoutSeconds: r.opts.Timeout.Seconds(), While: doing(replay.StepRunning)})
		r.live.WaitFor(seq)
		return outcomeDecided
	}
	seq := r.mark(replay.MarkInterrupted, replay.InterruptedMark{Phase: replay.PhaseRunning, While: doing(replay.StepRunning)})
	r.live.WaitFor(seq)
	return outcomeInterrupted
}

// lastSeq is the seq of the last event recorded (the header is 0, the
// events 1..Count).
func (r *run) lastSeq() uint64 { return r.writer.Count() }

// decided reports whether the engine, once it has seen every event recorded
// so far (every message the client has been passed among them), has decided
// the run or asked for the restart: the watch is over.
func (r *run) decided() bool {
	settled := r.rec.Settled()
	if r.live.WaitFor(settled) != nil {
		return true
	}
	switch r.live.Status().Phase {
	case enginePassed, engineFailed, engineRestart:
		return true
	}
	return false
}

// follow subscribes to a thread and reads its projection after every
// non-snapshot item, until the stream ends or ctx is done. A read in flight
// when ctx ends runs on under callCtx (see watch). onProjection sees every
// projection read.
func (r *run) follow(ctx, callCtx context.Context, s *session, threadID string, onProjection func(*t3.Projection)) error {
	stream, err := s.rpc.Stream(ctx, t3.MethodSubscribe, map[string]string{"threadId": threadID})
	if err != nil {
		return fmt.Errorf("subscribing to thread %s: %w", threadID, err)
	}
	defer stream.Close()
	for {
		raw, err := stream.Next(ctx)
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the subscription to thread %s ended without proof of delivery", threadID)
		}
		if err != nil {
			return fmt.Errorf("subscription to thread %s: %w", threadID, err)
		}
		var item t3.StreamItem
		if err := json.Unmarshal(raw, &item); err != nil {
			return fmt.Errorf("subscription to thread %s: undecodable item: %w", threadID, err)
		}
		proj := item.Projection
		if item.Kind != t3.ItemKindSnapshot {
			if ctx.Err() != nil || r.decided() {
				// No poll once the watch is over: the engine has judged
				// everything the client has been sent (the recorder saw
				// it first), and a read now would be traffic after the
				// verdict. The stream is interrupted on the way out.
				return nil
			}
			var p t3.Projection
			if err := s.rpc.Call(callCtx, t3.MethodGetProjection, map[string]string{"threadId": threadID}, &p); err != nil {
				return fmt.Errorf("reading thread %s: %w", threadID, err)
			}
			proj = &p
		}
		if proj != nil {
			onProjection(proj)
		}
	}
}

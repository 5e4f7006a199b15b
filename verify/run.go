package verify

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/model/cassette"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/redact"
	"github.com/wireproof/wireproof/replay"
	"github.com/wireproof/wireproof/t3"
)

// ToolVersion is written into bundle headers; the CLI sets it at start.
var ToolVersion = "wireproof dev"

// Result is the outcome of one run.
type Result struct {
	Scenario    assert.Scenario `json:"scenario"`
	Iteration   int             `json:"iteration"`
	Status      assert.Status   `json:"status"` // passed or failed
	Bundle      string          `json:"bundle"`
	VerdictFile string          `json:"verdictFile"`
	Verdict     assert.Verdict  `json:"verdict"`
	Interrupted bool            `json:"interrupted,omitempty"`
	Workspace   string          `json:"workspace,omitempty"` // the kept server home and project (KeepWorkspace)
	Events      uint64          `json:"events"`
	// ServerOutput is what the server printed last (stdout and stderr, at
	// most 20 lines, every secret redacted) when it exited, or never
	// printed its ready line, while starting or restarting: why it did not
	// come up. Empty when it started.
	ServerOutput []string `json:"serverOutput,omitempty"`
	// ModelCassette is what the model cassette played and missed
	// (Options.ModelCassette); nil without one.
	ModelCassette *cassette.Report `json:"modelCassette,omitempty"`
}

// Run performs one scenario run: it starts the server behind the recorder,
// drives the scenario, judges it live, restarts the server for the durability
// check, and writes the bundle and the verdict into the output directory. A
// failed check is a Result with Status failed, not an error; an error means the
// run could not be recorded at all (bad options, unwritable output).
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if opts.Scenario == "all" {
		return nil, &OptionError{"--scenario", "all", "a single run needs one scenario; use RunSuite"}
	}
	argv, err := serverArgv(opts)
	if err != nil {
		return nil, err
	}
	outGiven := opts.OutDir != ""
	if opts.OutDir, err = makeOutDir(opts.OutDir); err != nil {
		return nil, err
	}
	if !outGiven {
		fmt.Fprintf(opts.Stdout, "Evidence: %s\n", opts.OutDir)
	}
	name := runName(opts.Scenario, opts.Iteration)
	if err := checkFree(opts.OutDir, name); err != nil {
		return nil, err
	}
	res := &Result{
		Scenario:    opts.Scenario,
		Iteration:   opts.Iteration,
		Bundle:      filepath.Join(opts.OutDir, name+".zst"),
		VerdictFile: filepath.Join(opts.OutDir, name+".verdict.json"),
	}

	keepIn := ""
	if opts.KeepWorkspace {
		keepIn = filepath.Join(opts.OutDir, name+".work")
		res.Workspace = keepIn
	}
	ws, err := newWorkspace(ctx, keepIn)
	if err != nil {
		return nil, err
	}
	if !opts.KeepWorkspace {
		defer ws.remove()
	}
	repoDir := opts.RepoDir
	if repoDir == "" {
		repoDir, _ = os.Getwd()
	}
	repo := readRepoState(ctx, repoDir, opts.KeepPatch)

	var tape *cassette.Cassette
	if len(opts.ModelCassette) > 0 {
		if tape, err = cassette.Load(ctx, opts.ModelCassette...); err != nil {
			return nil, &OptionError{"--model-cassette", strings.Join(opts.ModelCassette, ","), err.Error()}
		}
	}
	var cli *providerCLI
	if opts.ProviderCLI != "" {
		if cli, err = newProviderCLI(opts, filepath.Join(ws.dir, "provider-home")); err != nil {
			return nil, err
		}
		if k := os.Getenv(upstreamKeyEnv(cli.driver)); k != "" && opts.ModelUpstream != "" {
			cli.apiKey = k // a real model's key: redacted and reported as the run's own
		}
	}
	bootstrapToken := rand.Text()
	secrets := append([]string{bootstrapToken}, runSecrets(opts)...)
	secret := "RESULT_" + t3.NewUUID()
	gatePath := "/" + t3.NewUUID()
	port, err := reservePort()
	if err != nil {
		return nil, err
	}
	bootstrap := t3.Bootstrap{
		Mode: "desktop", NoBrowser: true, Port: port, T3Home: ws.home, Host: "127.0.0.1",
		DesktopBootstrapToken: bootstrapToken, TailscaleServePort: 443, Fault: opts.Fault,
	}
	if isModelFault(opts.Fault) {
		bootstrap.Fault = "" // the scripted model plays it, not the server
	}
	if opts.Serialization != "json" {
		bootstrap.Serialization = opts.Serialization // the default stays out of the bootstrap
	}
	bootstrapJSON, err := json.Marshal(bootstrap)
	if err != nil {
		return nil, err
	}

	header := bundle.Header{
		Format:  bundle.FormatVersion,
		Tool:    ToolVersion,
		Started: time.Now().UTC(),
		Manifest: bundle.Manifest{
			Scenario: string(opts.Scenario), Provider: opts.Provider, Model: opts.Model,
			Revision: repo.Revision, Dirty: repo.Dirty,
			Commands: [][]string{redactArgs(argv, secrets)},
			Options: map[string]string{
				"timeout":       opts.Timeout.String(),
				"failGate":      fmt.Sprint(opts.FailGate),
				"fault":         opts.Fault,
				"serialization": opts.Serialization,
				"iteration":     fmt.Sprint(opts.Iteration),
				"port":          fmt.Sprint(port),

				"scriptedProvider": fmt.Sprint(opts.ScriptedProvider),
			},
		},
	}
	if opts.driver != "" {
		header.Manifest.Options[assert.OptionProviderDriver] = opts.driver
	}
	if cli != nil {
		header.Manifest.Options["providerCli"] = cli.path
		header.Manifest.Options["providerCliVersion"] = cli.version
	}
	if tape != nil {
		header.Manifest.Options["modelCassette"] = strings.Join(opts.ModelCassette, ",")
	}
	if opts.ModelUpstream != "" {
		header.Manifest.Options["modelUpstream"] = opts.ModelUpstream
	}
	if len(opts.Redact) > 0 {
		// Counted, never listed, as record's manifest does.
		header.Manifest.Options["redact"] = fmt.Sprintf("%d secrets", len(opts.Redact))
	}
	w, err := bundle.Create(res.Bundle, header, nil)
	if err != nil {
		return nil, outputErr(res.Bundle, err)
	}
	redact := redaction(secrets)
	if cli != nil {
		redact.Redact = append(redact.Redact, cli.apiKey)
	}
	redact.File = res.Bundle // what is learned later is redacted from the manifest and the first events at Close
	rec := record.New(w, redact)
	// The checks run live on the recorder's events through replay's engine,
	// fed the header first as replay feeds it.
	live := replay.NewLive(delivery.EngineOptions(nil))
	if err := live.Header(header); err != nil {
		rec.Close()
		return nil, err
	}
	rec.Subscribe("checks", live)

	if opts.ScriptedProvider || cli != nil {
		exe, err := executable(opts)
		if err == nil && cli != nil {
			err = cli.install(filepath.Join(ws.dir, "bin"), ws.home, exe)
		} else if err == nil {
			err = installScriptedProvider(filepath.Join(ws.dir, "bin"), ws.home, exe)
		}
		if err != nil {
			rec.Close()
			return nil, fmt.Errorf("installing the provider: %w", err)
		}
	}
	r := &run{
		opts: opts, rec: rec, live: live, argv: argv, bootstrap: bootstrapJSON,
		bootstrapToken: bootstrapToken, secrets: secrets, secret: secret, gatePath: gatePath,
		origin: fmt.Sprintf("http://127.0.0.1:%d", port), ws: ws, started: time.Now(),
		writer: w, cli: cli, cassette: tape,
	}
	if opts.ScriptedProvider || cli != nil {
		r.shimDir = filepath.Join(ws.dir, "bin")
	}
	if len(repo.Patch) > 0 {
		r.emit(&bundle.Event{Kind: bundle.KindArtifact, Name: "working-tree.patch", Body: bundle.Text(repo.Patch),
			Truncated: repo.PatchTruncated, Size: repo.PatchSize})
	}
	if repo.Status != "" {
		r.emit(&bundle.Event{Kind: bundle.KindArtifact, Name: "dirty.txt", Body: bundle.Text([]byte(repo.Status))})
	}

	if opts.Hooks != nil && opts.Hooks.Secret != nil {
		opts.Hooks.Secret(bootstrapToken)
		if cli != nil {
			opts.Hooks.Secret(cli.apiKey)
		}
	}
	interrupted := false
	// A scenario that does not apply to the run's provider is decided at
	// the header: there is nothing to drive, only the verdict to record.
	if live.Status().Phase != replay.PhaseNotApplicable {
		stopStatus := r.showStatus()
		interrupted = r.drive(ctx)
		stopStatus()
	}

	// The verdict covers every event up to this mark, live and in replay: the
	// engine decides it at the mark, so what is recorded after it is not judged.
	seq := r.mark(replay.MarkPhase, replay.PhaseMark{Phase: replay.PhaseDone})
	if err := live.WaitFor(seq); err != nil {
		rec.Close()
		return nil, fmt.Errorf("the live checks broke, so there is no verdict to trust: %w", err)
	}
	verdict := live.Verdict()
	vb, _ := json.Marshal(verdict)
	r.emit(&bundle.Event{Kind: bundle.KindVerdict, Body: bundle.Text(vb)})
	res.Events = w.Count() + 1 // the header included, as the trailer, replay and view count
	if err := rec.Close(); err != nil {
		return nil, outputErr(res.Bundle, err)
	}
	pretty, _ := json.MarshalIndent(verdict, "", "  ")
	if err := os.WriteFile(res.VerdictFile, append(pretty, '\n'), 0o600); err != nil {
		return nil, outputErr(res.VerdictFile, err)
	}
	res.Verdict, res.Status, res.Interrupted = verdict, verdict.Status, interrupted
	r.mu.Lock()
	res.ServerOutput = r.startOutput
	r.mu.Unlock()
	if r.tape != nil {
		rep := r.tape.Report()
		res.ModelCassette = &rep
	}
	return res, nil
}

// makeOutDir creates the output directory, or a new one under the system
// temp dir when dir is "", and returns its path.
func makeOutDir(dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "wireproof-verify-")
		return d, outputErr(os.TempDir(), err)
	}
	return dir, outputErr(dir, os.MkdirAll(dir, 0o755))
}

// runName names a run's files in the output directory.
func runName(scenario assert.Scenario, iteration int) string {
	return fmt.Sprintf("%s-%d", scenario, iteration)
}

// checkFree refuses an output directory that already holds the run's bundle:
// a bundle is evidence and is never overwritten.
func checkFree(dir, name string) error {
	if _, err := osStat(filepath.Join(dir, name+".zst")); err == nil {
		return &OutputError{Path: dir, Err: &ExistsError{Name: name + ".zst"}}
	}
	return nil
}

// osStat and osReadDir are how the output checks look at the output
// directory; tests count the calls.
var (
	osStat    = os.Stat
	osReadDir = os.ReadDir
)

// ExistsError is a bundle a run would write that the output directory
// already holds (the Err of an *OutputError naming the directory): a bundle
// is evidence and is never overwritten. It is an fs.ErrExist.
type ExistsError struct {
	Name string // the bundle's file name, idle-1.zst
}

func (e *ExistsError) Error() string {
	return "it already holds " + e.Name + ", and a bundle is never overwritten: choose another directory"
}

// Is makes errors.Is(err, fs.ErrExist) true.
func (e *ExistsError) Is(target error) bool { return target == fs.ErrExist }

// serverArgs are the arguments the server is started with.
var serverArgs = []string{"start", "--bootstrap-fd", "3", "--log-level", "debug"}

// serverArgv is the server's argv. A user's command line runs through sh, with
// exec so the server itself is the supervised process, and the start
// arguments passed as "$@" so they are never re-split.
func serverArgv(opts Options) ([]string, error) {
	if strings.TrimSpace(opts.ServerCmd) != "" {
		return append([]string{"sh", "-c", "exec " + opts.ServerCmd + ` "$@"`, "server"}, serverArgs...), nil
	}
	exe, err := executable(opts)
	if err != nil {
		return nil, fmt.Errorf("locating the embedded fixture server: %w", err)
	}
	return append([]string{exe, "fixture"}, serverArgs...), nil
}

// executable is the wireproof binary: Options.Executable or this one.
func executable(opts Options) (string, error) {
	if opts.Executable != "" {
		return filepath.Abs(opts.Executable)
	}
	return os.Executable()
}

// run is the state of one live run. Its methods run on the driver goroutine
// unless they say otherwise.
type run struct {
	opts           Options
	rec            *record.Recorder
	writer         *bundle.Writer
	live           *replay.Live // the checks, fed by the recorder
	argv           []string
	bootstrap      []byte
	bootstrapToken string
	secrets        []string // redacted from the start: the bootstrap token, Options.Redact, the environment's credentials
	secret         string
	gatePath       string
	origin         string
	ws             *workspace
	started        time.Time
	env            []string     // the server's environment (provider evidence, scripted provider)
	shimDir        string       // holds the scripted `claude` or the real CLI's wrapper, when asked for
	cli            *providerCLI // the real CLI (Options.ProviderCLI), or nil
	// cassette answers the CLI's model calls (Options.ModelCassette) when
	// set; tape is its handler once the model is up.
	cassette *cassette.Cassette
	tape     *cassette.Handler

	mu     sync.Mutex
	phase  replay.Phase
	server *record.Process
	// startOutput is the server's last output lines when it did not come
	// up (Result.ServerOutput).
	startOutput []string
}

func (r *run) emit(ev *bundle.Event) uint64 {
	seq, err := r.rec.Emit(ev)
	if err != nil {
		fmt.Fprintf(r.opts.Stdout, "wireproof: recording failed: %v\n", err)
	}
	return seq
}

// secretLearned makes the recorder redact a credential from now on.
func (r *run) secretLearned(s string) {
	r.rec.AddSecret(s)
	if r.opts.Hooks != nil && r.opts.Hooks.Secret != nil {
		r.opts.Hooks.Secret(s)
	}
}

// mark writes a driver mark; body is the mark's type in replay (the
// encoder and decoder the engine shares).
func (r *run) mark(name string, body any) uint64 {
	ev, err := replay.EncodeMark(name, body)
	if err != nil {
		panic(err) // the mark types always encode
	}
	return r.emit(ev)
}

func (r *run) setPhase(p replay.Phase) {
	r.mu.Lock()
	r.phase = p
	r.mu.Unlock()
	r.mark(replay.MarkPhase, replay.PhaseMark{Phase: p})
	if r.opts.Hooks != nil && r.opts.Hooks.Phase != nil {
		r.opts.Hooks.Phase(p)
	}
	if r.opts.Status == nil {
		fmt.Fprintf(r.opts.Stdout, "[%s] %s (%.1fs)\n", r.opts.Scenario, p, time.Since(r.started).Seconds())
	}
}

// showStatus keeps a live status line on the status writer (a terminal) until
// the returned func is called.
func (r *run) showStatus() func() {
	if r.opts.Status == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			r.mu.Lock()
			p := r.phase
			r.mu.Unlock()
			fmt.Fprintf(r.opts.Status, "\r\x1b[K[%s] %-10s %6.1fs  %d events", r.opts.Scenario, p, time.Since(r.started).Seconds(), r.writer.Count())
			select {
			case <-done:
				fmt.Fprint(r.opts.Status, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// drive runs the scenario and the restart, and always leaves the server, the
// gate and the proxy stopped. It reports whether the run was interrupted.
func (r *run) drive(parent context.Context) (interrupted bool) {
	// Cleanup must run even when the parent context is cancelled (SIGINT).
	bg := context.WithoutCancel(parent)
	ctx, cancel := context.WithTimeout(parent, r.opts.Timeout)
	defer cancel()

	r.setPhase(replay.PhaseStarting)
	gate, err := record.StartGate(bg, r.rec, nil)
	if err != nil {
		r.mark(replay.MarkSetupFailed, replay.StepMark{Step: replay.StepGate, Error: err.Error()})
		return false
	}
	defer gate.Close()

	proxy, err := r.startProxy(bg)
	if err != nil {
		r.mark(replay.MarkSetupFailed, replay.StepMark{Step: replay.StepProxy, Error: err.Error()})
		return false
	}
	defer func() {
		// In-flight exchanges get a moment to finish; then they are cut.
		stopCtx, cancel := context.WithTimeout(bg, 5*time.Second)
		defer cancel()
		proxy.Close(stopCtx)
	}()

	tap, err := startProviderTap(r.rec, r.secretLearned)
	if err != nil {
		r.mark(replay.MarkSetupFailed, replay.StepMark{Step: replay.StepProviderTap, Error: err.Error()})
		return false
	}
	defer func() {
		// Runs after the server is stopped: the provider processes' streams
		// end with them; one that does not is cut after a moment.
		stopCtx, cancel := context.WithTimeout(bg, 5*time.Second)
		defer cancel()
		tap.close(stopCtx)
	}()
	var cliEnv []string
	if r.cli != nil {
		m, err := r.startModel(bg)
		if err != nil {
			r.mark(replay.MarkSetupFailed, replay.StepMark{Step: replay.StepModel, Error: err.Error()})
			return false
		}
		defer func() {
			// After the server and its CLIs are stopped.
			stopCtx, cancel := context.WithTimeout(bg, 5*time.Second)
			defer cancel()
			m.close(stopCtx)
		}()
		if cliEnv, err = r.cli.env(m.url); err != nil {
			r.mark(replay.MarkSetupFailed, replay.StepMark{Step: replay.StepModel, Error: err.Error()})
			return false
		}
	}
	r.env = providerEnv(tap.URL(), proxy.URL, strings.TrimPrefix(r.origin, "http://"), r.shimDir, cliEnv)

	defer func() {
		if srv := r.currentServer(); srv != nil {
			srv.Stop(bg)
		}
	}()
	if err := r.startServer(ctx, bg); err != nil {
		return r.endEarly(parent, ctx, replay.StepServer, err)
	}

	r.setPhase(replay.PhaseSetup)
	client := t3.NewClient(proxy.URL, nil)
	sc, err := r.setup(ctx, client, gate.URL()+r.gatePath)
	if err != nil {
		return r.endEarly(parent, ctx, sc.step, err)
	}
	defer sc.close()

	r.setPhase(replay.PhaseRunning)
	outcome := r.watch(ctx, sc, gate)
	switch outcome {
	case outcomeRestart:
	case outcomeInterrupted:
		return true
	default:
		return false
	}

	// Durability: a clean restart on the same home and port, then the thread
	// read over HTTP.
	sc.close()
	r.setPhase(replay.PhaseRestarting)
	r.mark(replay.MarkRestart, replay.RestartMark{ThreadID: sc.threadID})
	if srv := r.currentServer(); srv != nil {
		// An interrupt or the deadline cuts the stop's grace short (SIGKILL
		// at once) and starts no new server: a server that ignores SIGTERM
		// kept a Ctrl-C waiting out the whole grace, and then a new server
		// was started only to be stopped.
		srv.Stop(ctx)
	}
	if err := ctx.Err(); err != nil {
		return r.endEarly(parent, ctx, replay.StepRestart, err)
	}
	if err := r.startServer(ctx, bg); err != nil {
		return r.endEarly(parent, ctx, replay.StepRestart, err)
	}
	if _, _, err := client.ReadThread(ctx, sc.threadID); err != nil {
		var httpErr *t3.HTTPError
		if !errors.As(err, &httpErr) {
			// Not an HTTP answer the checks can judge: say why.
			return r.endEarly(parent, ctx, replay.StepRestartRead, err)
		}
	}
	return false
}

// endEarly records why the run could not go on, as the mark the engine turns
// into the failing check.
func (r *run) endEarly(parent, ctx context.Context, step replay.Step, err error) bool {
	switch {
	case parent.Err() != nil:
		r.mark(replay.MarkInterrupted, replay.InterruptedMark{Step: step, While: doing(step)})
		return true
	case ctx.Err() != nil:
		r.mark(replay.MarkDeadline, replay.DeadlineMark{TimeoutSeconds: r.opts.Timeout.Seconds(), While: doing(step)})
		return false
	}
	if r.serverDied() {
		// The engine has judged the unexpected exit already (server-alive).
		return false
	}
	if step == replay.StepRestartRead || step == replay.StepStream {
		r.mark(replay.MarkDriverError, replay.StepMark{Step: step, Error: err.Error()})
		return false
	}
	r.mark(replay.MarkSetupFailed, replay.StepMark{Step: step, Error: err.Error()})
	return false
}

// doing says what the driver was doing at step (a setup step, the server's
// start or restart, the restart read or the running scenario), for the deadline and interrupted
// marks: the verdict says "the 20s timeout expired while starting the
// server", not a phase the run never reached.
func doing(step replay.Step) string {
	switch step {
	case replay.StepServer:
		return "starting the server (it had not printed its ready line)"
	case replay.StepRestart:
		return "restarting the server (it had not printed its ready line)"
	case replay.StepRestartRead:
		return "reading the thread back after the restart"
	case replay.StepToken:
		return "setting up: exchanging the bootstrap token"
	case replay.StepProject:
		return "setting up: creating the project"
	case replay.StepTicket:
		return "setting up: getting the WebSocket ticket"
	case replay.StepConnect:
		return "setting up: connecting the RPC socket"
	case replay.StepLaunch:
		return "setting up: launching the thread"
	case replay.StepRunning:
		return "running the scenario (following the thread)"
	}
	return string(step)
}

// serverDied reports whether the server exited without being asked to, waiting
// briefly for an exit in progress (a dropped connection is usually seen before
// the process is reaped).
func (r *run) serverDied() bool {
	srv := r.currentServer()
	if srv == nil {
		return false
	}
	select {
	case <-srv.Done():
	case <-time.After(2 * time.Second):
		return false
	}
	return !srv.Stopping()
}

func (r *run) currentServer() *record.Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.server
}

func (r *run) startServer(ctx, bg context.Context) error {
	srv, err := record.StartProcess(bg, r.rec, &record.ProcessOptions{
		Name:         "server",
		Argv:         r.argv,
		Dir:          r.ws.dir,
		Env:          r.env,
		ExtraFile:    r.bootstrap,
		ReadyLine:    t3.ReadyLogLine,
		ReadyTimeout: ReadyTimeout,
		StopGrace:    StopGrace,
		Redact:       r.secrets,
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.server = srv
	r.mu.Unlock()
	if r.opts.Hooks != nil && r.opts.Hooks.ServerStarted != nil {
		r.opts.Hooks.ServerStarted(srv.Pid())
	}
	err = srv.Ready(ctx)
	var exited *record.ExitedError
	var timedOut *record.ReadyTimeoutError
	var lines []string
	switch {
	case errors.As(err, &exited):
		lines = exited.LastLines
	case errors.As(err, &timedOut):
		lines = timedOut.LastLines
	case err != nil && ctx.Err() != nil:
		// The run's deadline (a --timeout shorter than ReadyTimeout) or an
		// interrupt ended the wait: the server did not come up either, and
		// what it printed says why as much as at ReadyTimeout.
		lines = srv.LastLines()
	}
	if lines != nil {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = r.rec.Redact(l)
		}
		r.mu.Lock()
		r.startOutput = out
		r.mu.Unlock()
	}
	return err
}

// startProxy puts the recording proxy in front of the server's port.
func (r *run) startProxy(ctx context.Context) (*record.Server, error) {
	upstream, err := url.Parse(r.origin)
	if err != nil {
		return nil, err
	}
	proxy, err := record.NewProxy(r.rec, &record.ProxyOptions{Upstream: upstream})
	if err != nil {
		return nil, err
	}
	return record.Listen(ctx, "127.0.0.1:0", proxy)
}

// session is the authenticated connection to the server for the scenario.
type session struct {
	step     replay.Step // the setup step that failed
	client   *t3.Client
	rpc      *t3.RPCClient
	threadID string
	once     sync.Once
}

func (s *session) close() {
	s.once.Do(func() {
		if s.rpc != nil {
			s.rpc.Close()
		}
	})
}

// setup authenticates, creates the project, connects the RPC socket and
// launches the scenario's thread.
func (r *run) setup(ctx context.Context, client *t3.Client, gateURL string) (*session, error) {
	s := &session{client: client}
	s.step = replay.StepToken
	token, err := client.ExchangeToken(ctx, r.bootstrapToken)
	if err != nil {
		return s, fmt.Errorf("authentication failed: %w", err)
	}
	r.secretLearned(token)
	s.step = replay.StepProject
	projectID := t3.NewUUID()
	if _, err := client.CreateProject(ctx, projectID, "Background verification", r.ws.project); err != nil {
		return s, fmt.Errorf("project creation failed: %w", err)
	}
	s.step = replay.StepTicket
	ticket, err := client.WebSocketTicket(ctx)
	if err != nil {
		return s, fmt.Errorf("WebSocket authentication failed: %w", err)
	}
	r.secretLearned(ticket)
	s.step = replay.StepConnect
	if s.rpc, err = client.DialRPC(ctx, ticket, &t3.RPCOptions{Serialization: r.opts.Serialization}); err != nil {
		return s, fmt.Errorf("RPC connection failed: %w", err)
	}
	s.threadID = t3.NewUUID()
	prompt := Prompt(r.opts.Scenario, r.opts.Provider, r.opts.Model, gateURL)
	r.emit(&bundle.Event{Kind: bundle.KindArtifact, Name: "prompt.txt", Body: bundle.Text([]byte(prompt))})
	r.mark(replay.MarkRun, replay.RunInfo{
		Scenario: r.opts.Scenario, ThreadID: s.threadID, ProjectID: projectID, Secret: r.secret,
		GateURL: gateURL, Provider: r.opts.Provider, Model: r.opts.Model, FailGate: r.opts.FailGate,
	})
	s.step = replay.StepLaunch
	launch := map[string]any{
		"commandId":         t3.NewUUID(),
		"threadId":          s.threadID,
		"projectId":         projectID,
		"title":             "Background verification: " + r.opts.Scenario,
		"modelSelection":    map[string]string{"instanceId": r.opts.Provider, "model": r.opts.Model},
		"runtimeMode":       "full-access",
		"interactionMode":   "default",
		"workspaceStrategy": map[string]string{"type": "root"},
		"initialMessage":    map[string]any{"text": prompt, "attachments": []any{}},
	}
	var launched t3.LaunchResult
	if err := s.rpc.Call(ctx, t3.MethodLaunchThread, launch, &launched); err != nil {
		return s, fmt.Errorf("launching the thread failed: %w", err)
	}
	return s, nil
}

// trimError shortens an error for a mark.
func trimError(err error) string {
	s := err.Error()
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return strings.TrimSpace(s)
}

// redactArgs returns argv with the run's secrets, T3's token fields and any
// URL's userinfo password replaced, for the manifest.
func redactArgs(argv []string, secrets []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = redact.Text(a, &redact.Options{Secrets: secrets, TokenFields: t3.TokenFields})
	}
	return out
}

// redaction is how a run's recording redacts: the run's secrets (the
// bootstrap token first, runSecrets), and the values of T3's token fields (t3 owns the protocol contract, and with it the
// names of its credential fields, the generic ones among them); redactArgs
// redacts the same way.
func redaction(secrets []string) *record.Options {
	return &record.Options{
		Redact:      slices.Clip(secrets), // appended to per run
		TokenFields: t3.TokenFields,
	}
}

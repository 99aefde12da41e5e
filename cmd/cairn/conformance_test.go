package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, server mode) against cairn serve's
// /mcp, three times (conformanceRuns): cairn as it is (--suite all); cairn
// serving the suite's fixtures beside its own tools (conformanceFixtures,
// compiled only into the test binary), --suite all; and the same fixture
// mode against the scenarios the 2026-07-28 revision requires
// (--requirements 2026-07-28), the canonical conformance claim. Each run
// has its own cairn serve; the suite sends no token, so it talks to the
// server through a proxy that adds the owner's: everything else is the real
// server and its real transport. The failures each run expects are listed,
// each with its reason, in the run's section of
// testdata/conformance-baseline.yml; any other failure fails the test, and
// an entry that now passes is logged. A scenario the run should have run
// but has no results of (the suite stopped part way) runs again alone; one
// still without results fails the test (runMissing). The summary
// ($CAIRN_CONFORMANCE_SUMMARY, which make test prints) gives each run's
// scenario and check counts.
//
// It runs when $CAIRN_CONFORMANCE names the suite's dist/index.js and
// $CAIRN_NODE a Node 22 (scripts/conformance.sh installs both); otherwise it
// is skipped. $CAIRN_CONFORMANCE_SCENARIO=NAME runs that one scenario
// verbosely instead, against the server and at the protocol revision of the
// run $CAIRN_CONFORMANCE_RUN names (server, the default; fixtures;
// requirements), and logs what the suite printed. $CAIRN_CONFORMANCE_OUT
// keeps the suite's results, one folder per run.
func TestConformance(t *testing.T) {
	suite, node := os.Getenv("CAIRN_CONFORMANCE"), os.Getenv("CAIRN_NODE")
	if suite == "" || node == "" {
		t.Skip("$CAIRN_CONFORMANCE and $CAIRN_NODE name no conformance suite (.ci/run installs it)")
	}
	runs := conformanceRuns()
	if sc := os.Getenv("CAIRN_CONFORMANCE_SCENARIO"); sc != "" {
		name := cmpOr(os.Getenv("CAIRN_CONFORMANCE_RUN"), "server")
		i := slices.IndexFunc(runs, func(r conformanceRun) bool { return r.name == name })
		if i < 0 {
			t.Fatalf("$CAIRN_CONFORMANCE_RUN=%s names no run (server, fixtures, requirements)", name)
		}
		args := []string{suite, "server", "--url", serveConformance(t, runs[i].fixtures), "--scenario", sc, "--verbose"}
		if runs[i].revision != "" {
			args = append(args, "--spec-version", runs[i].revision)
		}
		cmd := exec.Command(node, args...)
		cmd.Env = append(os.Environ(), "NO_COLOR=1")
		out, _ := cmd.CombinedOutput()
		t.Logf("%s", out)
		return
	}
	baseline := readConformanceBaseline(t, runs)
	var summary []string
	for _, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			out := filepath.Join(cmpOr(os.Getenv("CAIRN_CONFORMANCE_OUT"), t.TempDir()), run.name)
			res, text := runConformance(t, suite, node, serveConformance(t, run.fixtures), out, run)
			res = runMissing(t, suite, node, out, run, res, text)
			unexpected, stale := res.judge(baseline[run.name])
			unexpected = retryUnexpected(t, suite, node, out, run, baseline[run.name], unexpected)
			line := res.summary(run, len(unexpected))
			if run.revision != "" {
				line += requiredSummary(t, suite, run.revision, res)
			}
			t.Log(line)
			summary = append(summary, line)
			for _, s := range stale {
				t.Logf("baseline entry %s: %s matches no failure (it passes, or did not run): it may leave the baseline", run.name, s)
			}
			for _, u := range unexpected {
				t.Errorf("a conformance failure not in the %s section of testdata/conformance-baseline.yml: %s", run.name, u)
			}
		})
	}
	if f := os.Getenv("CAIRN_CONFORMANCE_SUMMARY"); f != "" {
		if err := os.WriteFile(f, []byte(strings.Join(summary, "\n")+"\n"), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// retryUnexpected runs each scenario of the unexpected failures once more,
// alone, on a new server, and returns the failures that came again. A
// failure that does not come again is logged as flaky. (The answers
// without their result that the suite once saw under a loaded machine,
// once in several runs, were the test's proxy dropping its connection to
// the server; see serveConformance.)
func retryUnexpected(t *testing.T, suite, node, out string, run conformanceRun, baseline, unexpected []string) []string {
	t.Helper()
	var again []string
	for _, u := range unexpected {
		sc, _, _ := strings.Cut(u, "/")
		if !slices.Contains(again, sc) {
			again = append(again, sc)
		}
	}
	var still []string
	for _, sc := range again {
		res, _ := runAlone(t, suite, node, filepath.Join(out, "again-"+sc), run, sc)
		failed, _ := res.judge(baseline)
		var first []string
		for _, u := range unexpected {
			if strings.HasPrefix(u, sc+"/") {
				first = append(first, u)
			}
		}
		if len(failed) == 0 {
			t.Logf("flaky: %s failed, then passed run alone: %q", sc, first)
			continue
		}
		still = append(still, first...)
	}
	return still
}

// runMissing makes sure a run has results of every scenario it is meant
// to run (expectedScenarios): a suite that stops part way, as it did
// under a loaded machine after 36 of 62 scenarios (the proxy's dropped
// connection, since fixed), would otherwise pass with what it ran. Each
// missing scenario is run again, alone, on a new server, and its results
// join the run's; one that still has none fails the test. text is what
// the suite printed in the run.
func runMissing(t *testing.T, suite, node, out string, run conformanceRun, res conformanceResults, text []byte) conformanceResults {
	t.Helper()
	var missing []string
	for _, sc := range expectedScenarios(t, suite, node, run) {
		if _, ran := res[sc]; !ran {
			missing = append(missing, sc)
		}
	}
	if len(missing) == 0 {
		return res
	}
	t.Logf("the suite ran %d scenarios and not %d it lists (%s); each runs again alone. The end of what it printed:\n%s",
		len(res), len(missing), strings.Join(missing, ", "), lastLines(text, 20))
	for _, sc := range missing {
		again, text := runAlone(t, suite, node, filepath.Join(out, "missing-"+sc), run, sc)
		if _, ran := again[sc]; !ran {
			t.Errorf("the conformance suite ran no scenario %s, alone either:\n%s", sc, lastLines(text, 20))
			continue
		}
		maps.Copy(res, again)
	}
	return res
}

// runAlone runs scenario sc of run alone, at the run's revision, on a new
// server, keeping its results in the folder out.
func runAlone(t *testing.T, suite, node, out string, run conformanceRun, sc string) (conformanceResults, []byte) {
	t.Helper()
	one := run
	one.args = []string{"--scenario", sc}
	if run.revision != "" {
		one.args = append(one.args, "--spec-version", run.revision)
	}
	return runConformance(t, suite, node, serveConformance(t, run.fixtures), out, one)
}

// expectedScenarios are the scenarios run must have results of: every
// server scenario the suite lists, for --suite all; for a requirement set,
// those its revision requires and those it runs without scoring them.
func expectedScenarios(t *testing.T, suite, node string, run conformanceRun) []string {
	t.Helper()
	listed := listedScenarios(t, suite, node)
	if run.revision != "" {
		req, err := readRequirements(suite, run.revision)
		if err != nil {
			t.Fatalf("the suite's %s requirements: %v", run.revision, err)
		}
		// An unscored scenario this release of the suite does not have,
		// it skips.
		unscored := slices.DeleteFunc(req.unscored(), func(sc string) bool { return !slices.Contains(listed, sc) })
		return append(req.Server, unscored...)
	}
	return listed
}

// listedScenarios are the server scenarios the suite lists.
func listedScenarios(t *testing.T, suite, node string) []string {
	t.Helper()
	cmd := exec.Command(node, suite, "list", "--server")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	text, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("list the conformance suite's scenarios: %v\n%s", err, text)
	}
	var names []string
	for _, m := range listedScenario.FindAllSubmatch(text, -1) {
		names = append(names, string(m[1]))
	}
	if len(names) == 0 {
		t.Fatalf("the conformance suite listed no server scenarios:\n%s", text)
	}
	return names
}

// listedScenario is a scenario in the suite's list: "  - NAME", then the
// revisions it applies to, if any.
var listedScenario = regexp.MustCompile(`(?m)^  - (\S+)`)

// lastLines is the last n lines of text.
func lastLines(text []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// conformanceRun is one run of the suite.
type conformanceRun struct {
	// name is the run's section of the baseline and its folder of results.
	name string
	// about says in the summary what the run is.
	about string
	// fixtures has the server serve the suite's fixtures.
	fixtures bool
	// args choose the scenarios.
	args []string
	// revision, when set, is the protocol revision whose requirement set
	// the run is (--requirements): its scenarios run at that revision's
	// wire.
	revision string
}

// conformanceRuns returns TestConformance's runs, in order.
func conformanceRuns() []conformanceRun {
	return []conformanceRun{
		{name: "server", about: "cairn serve, --suite all", args: []string{"--suite", "all"}},
		{name: "fixtures", about: "cairn serve with the suite's fixtures, --suite all", fixtures: true, args: []string{"--suite", "all"}},
		{name: "requirements", about: "cairn serve with the suite's fixtures, --requirements 2026-07-28", fixtures: true,
			args: []string{"--requirements", "2026-07-28"}, revision: "2026-07-28"},
	}
}

// readConformanceBaseline reads testdata/conformance-baseline.yml: for each
// run, its expected failures.
func readConformanceBaseline(t *testing.T, runs []conformanceRun) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "conformance-baseline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var baseline map[string][]string
	if err := yaml.Unmarshal(data, &baseline); err != nil {
		t.Fatalf("conformance-baseline.yml: %v", err)
	}
	for name := range baseline {
		if !slices.ContainsFunc(runs, func(r conformanceRun) bool { return r.name == name }) {
			t.Fatalf("conformance-baseline.yml: section %s names no run", name)
		}
	}
	return baseline
}

// serveConformance starts a cairn serve for a new sample vault, with the
// suite's fixtures or without, and returns the URL of its /mcp through a
// proxy that adds the owner's token. The proxy is transparent but for the
// token: a Host or Origin naming the proxy names the server instead, others
// pass as they came.
func serveConformance(t *testing.T, fixtures bool) string {
	t.Helper()
	mode := ""
	if fixtures {
		mode = "1"
	}
	t.Setenv("CAIRN_TEST_MCP_FIXTURES", mode)
	srv := startServe(t, sampleVault(t))
	target, err := url.Parse(srv.file.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewUnstartedServer(nil)
	proxy.Config.Handler = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
		if r.In.Host == proxy.Listener.Addr().String() {
			r.Out.Host = target.Host
		}
		if o := r.In.Header.Get("Origin"); o == "http://"+proxy.Listener.Addr().String() {
			r.Out.Header.Set("Origin", srv.file.URL)
		}
		r.Out.Header.Set("Authorization", "Bearer "+srv.file.Token)
	}}
	// The request's body is read whole before it is sent on. Streamed,
	// the transport reads it once more for EOF after sending it, and the
	// server, which closes an unread body as soon as the proxy starts
	// the answer, can close it first: the transport then drops the
	// connection in the middle of the answer, and the suite waits for
	// the rest until its timeout (five minutes, under a loaded machine).
	forward := proxy.Config.Handler
	proxy.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		forward.ServeHTTP(w, r)
	})
	proxy.Start()
	t.Cleanup(proxy.Close)
	return proxy.URL + "/mcp"
}

// runConformance runs the suite's run against the server at url, keeping
// its results in the folder out, and returns them and what it printed.
func runConformance(t *testing.T, suite, node, url, out string, run conformanceRun) (conformanceResults, []byte) {
	t.Helper()
	cmd := exec.Command(node, append([]string{suite, "server", "--url", url, "-o", out}, run.args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	text, err := cmd.CombinedOutput()
	// The suite exits 1 when any scenario fails; the baseline decides.
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run the conformance suite: %v\n%s", err, text)
	}
	files, err := filepath.Glob(filepath.Join(out, "server-*", "checks.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the conformance suite wrote no results (%v):\n%s", err, text)
	}
	res := conformanceResults{}
	for _, f := range files {
		var checks []conformanceCheck
		data, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(data, &checks)
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := scenarioName(filepath.Base(filepath.Dir(f)))
		res[name] = append(res[name], checks...)
	}
	return res, text
}

// conformanceCheck is one check of a scenario, as the suite's checks.json
// has it; Status is SUCCESS, FAILURE, WARNING, SKIPPED or INFO.
type conformanceCheck struct{ ID, Status, ErrorMessage string }

// conformanceResults are the checks of a run, by scenario.
type conformanceResults map[string][]conformanceCheck

// failed reports whether a scenario has a failed check.
func (r conformanceResults) failed(scenario string) bool {
	return slices.ContainsFunc(r[scenario], func(c conformanceCheck) bool { return c.Status == "FAILURE" })
}

// judge compares the failures with the run's baseline, whose entries are
// scenarios (any of whose checks may fail) or scenario/check. It returns
// the failures no entry expects, and the entries that no failure matches.
func (r conformanceResults) judge(baseline []string) (unexpected, stale []string) {
	expected := map[string]bool{}
	for _, e := range baseline {
		expected[e] = true
	}
	matched := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(r)) {
		for _, c := range r[name] {
			if c.Status != "FAILURE" {
				continue
			}
			switch id := name + "/" + c.ID; {
			case expected[id]:
				matched[id] = true
			case expected[name]:
				matched[name] = true
			default:
				unexpected = append(unexpected, id+": "+c.ErrorMessage)
			}
		}
	}
	for _, e := range baseline {
		if !matched[e] {
			stale = append(stale, e)
		}
	}
	return unexpected, stale
}

// summary is the run's line of the summary: its scenario and check counts.
func (r conformanceResults) summary(run conformanceRun, unexpected int) string {
	count := map[string]int{}
	failedScenarios := 0
	for name, checks := range r {
		if r.failed(name) {
			failedScenarios++
		}
		for _, c := range checks {
			count[c.Status]++
		}
	}
	return fmt.Sprintf("MCP conformance, %s (%s): %d scenarios, %d passed, %d failed; %d checks passed, %d failed (%d not in the baseline), %d warnings",
		run.name, run.about, len(r), len(r)-failedScenarios, failedScenarios,
		count["SUCCESS"], count["FAILURE"], unexpected, count["WARNING"])
}

// requiredSummary adds to a summary line how many of the scenarios the
// revision requires passed: the suite's requirements file lists them (the
// others of the run are run but not scored).
func requiredSummary(t *testing.T, suite, revision string, r conformanceResults) string {
	t.Helper()
	req, err := readRequirements(suite, revision)
	if err != nil {
		t.Logf("the suite's %s requirements: %v", revision, err)
		return ""
	}
	passed := 0
	for _, s := range req.Server {
		if _, ran := r[s]; ran && !r.failed(s) {
			passed++
		}
	}
	unscored := req.unscored()
	ran := 0
	for _, s := range unscored {
		if _, ok := r[s]; ok {
			ran++
		}
	}
	return fmt.Sprintf("; %d of the %d scenarios %s requires pass, and %d of the %d it runs without scoring ran",
		passed, len(req.Server), revision, ran, len(unscored))
}

// requirements are what the suite's requirements file of a revision says
// of servers: the scenarios it requires, and those a run of the set runs
// and reports but never scores (not_scored, of either leg).
type requirements struct {
	Server    []string
	NotScored []struct{ Scenario, Leg string } `yaml:"not_scored"`
}

// unscored are the server scenarios run without being scored.
func (r requirements) unscored() []string {
	var out []string
	for _, n := range r.NotScored {
		if n.Leg == "server" {
			out = append(out, n.Scenario)
		}
	}
	return out
}

// readRequirements reads the suite's requirements file of revision.
func readRequirements(suite, revision string) (requirements, error) {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(suite), "..", "requirements", revision+".yaml"))
	var req requirements
	if err == nil {
		err = yaml.Unmarshal(data, &req)
	}
	if err == nil && len(req.Server) == 0 {
		err = errors.New("no server scenarios")
	}
	return req, err
}

// scenarioName is the scenario of a result folder, "server-NAME-TIME".
func scenarioName(dir string) string {
	return resultTime.ReplaceAllString(strings.TrimPrefix(dir, "server-"), "")
}

var resultTime = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z?$`)

package admit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"
	"go.yaml.in/yaml/v3"

	"cairn"
	"cairn/lint"
	"cairn/markdown"
)

// GatePolicy is the gate of the vault's own policies (policies: in
// cairn.yaml): each finding's verdict is its policy's.
const GatePolicy = "policy"

// policyCostLimit bounds one evaluation of one policy, in CEL's cost units
// (about one per operation): a policy that runs past it holds the change.
const policyCostLimit = 1_000_000

// ChangePolicy is one of the vault's policies: a CEL expression over the
// change that, when it is true, gives the change its verdict, in the style
// of Kubernetes' ValidatingAdmissionPolicy. cairn.yaml lists them under
// policies:.
type ChangePolicy struct {
	// Name identifies the policy in findings; unique, [a-z0-9-].
	Name string `yaml:"name"`
	// Expression is the CEL expression, of type bool: true when the
	// policy applies to the change (see docs/admission.md, Policies).
	Expression string `yaml:"expression"`
	// Verdict is what the change gets when the expression is true:
	// admit, hold or reject.
	Verdict cairn.Verdict `yaml:"verdict"`
	// Message says why, to the person who reviews or the agent refused.
	Message string `yaml:"message"`

	line int // in cairn.yaml
	prg  cel.Program
}

// UnmarshalYAML reads a policy and where it is.
func (c *ChangePolicy) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch k := n.Content[i]; k.Value {
			case "name", "expression", "verdict", "message":
			default:
				return fmt.Errorf("line %d: a policy has no key %q; it has name, expression, verdict and message", k.Line, k.Value)
			}
		}
	}
	type plain ChangePolicy
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*c = ChangePolicy(p)
	c.line = n.Line
	return nil
}

// policyEnv is the CEL environment of policies: the change's variables.
func policyEnv() (*cel.Env, error) {
	dyn := cel.MapType(cel.StringType, cel.DynType)
	return cel.NewEnv(
		cel.Variable("principal", cel.StringType),
		cel.Variable("origin", cel.StringType),
		cel.Variable("route", cel.StringType),
		cel.Variable("files", cel.ListType(dyn)),
		cel.Variable("findings", cel.ListType(cel.MapType(cel.StringType, cel.StringType))),
		cel.Variable("diff", cel.MapType(cel.StringType, cel.IntType)),
		ext.Strings(),
	)
}

// compilePolicies compiles and type-checks the policies; the first error
// names the policy, its line in cairn.yaml and the position in the
// expression.
func compilePolicies(ps []ChangePolicy) error {
	if len(ps) == 0 {
		return nil
	}
	env, err := policyEnv()
	if err != nil {
		return fmt.Errorf("admission: policies: %w", err)
	}
	seen := map[string]bool{}
	for i := range ps {
		c := &ps[i]
		where := fmt.Sprintf("policies[%d]", i)
		if c.Name != "" {
			where = fmt.Sprintf("policies[%d] (%s, line %d)", i, c.Name, c.line)
		}
		bad := func(format string, args ...any) error {
			return cairn.Errorf(cairn.EINVALID, "%s: %s: "+format, append([]any{PolicyFile, where}, args...)...).
				WithHint("A policy is {name, expression, verdict, message}; docs/admission.md (Policies) lists the variables an expression reads.")
		}
		switch {
		case c.Name == "" || strings.Trim(c.Name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "":
			return bad("the name %q must be lower-case letters, digits and dashes", c.Name)
		case seen[c.Name]:
			return bad("the name %s is used twice", c.Name)
		case c.Verdict != cairn.Admit && c.Verdict != cairn.Hold && c.Verdict != cairn.Reject:
			return bad("the verdict %q is not admit, hold or reject", c.Verdict)
		case strings.TrimSpace(c.Message) == "":
			return bad("a policy needs a message that says why")
		case strings.TrimSpace(c.Expression) == "":
			return bad("a policy needs an expression")
		}
		seen[c.Name] = true
		ast, iss := env.Compile(c.Expression)
		if iss.Err() != nil {
			return bad("the expression does not compile:\n%s", iss.String())
		}
		if !ast.OutputType().IsExactType(cel.BoolType) {
			return bad("the expression is of type %s; it must be a bool (true when the policy applies)", ast.OutputType())
		}
		if c.prg, err = env.Program(ast, cel.CostLimit(policyCostLimit), cel.InterruptCheckFrequency(100)); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// policyInput is what the policies of a change read.
type policyInput struct {
	vars map[string]any
}

// changeInput builds the variables of the policies for a change from base
// to result: each changed file with its type and frontmatter before and
// after (pages), its lines added and removed and the sources its
// frontmatter names that the result does not hold.
func changeInput(ctx context.Context, r treeReader, result cairn.Hash, changes []cairn.Change, req *Request, fs []cairn.Finding) (*policyInput, error) {
	// At most this many files are read for the policies; a larger change
	// (an import) is described by its paths and kinds alone.
	const readFiles = 2000
	files := make([]any, 0, len(changes))
	var pages, added, removed int64
	for _, c := range changes {
		f := map[string]any{"path": c.Path, "kind": string(c.Kind), "old_path": "",
			"type": "", "type_before": "", "frontmatter": map[string]any{}, "frontmatter_before": map[string]any{},
			"added": int64(0), "removed": int64(0), "missing_sources": []any{}}
		if c.Kind == cairn.Renamed {
			f["old_path"] = c.Old.Path
		}
		var before, after []byte
		var err error
		if len(files) >= readFiles {
			if lint.Classify(c.Path) == lint.KindPage {
				pages++
			}
			files = append(files, f)
			continue
		}
		if c.Kind != cairn.Added && !c.Old.Blob.IsZero() {
			if before, err = r.ReadBlob(ctx, c.Old.Blob); err != nil && !errors.Is(err, cairn.ErrPurged) {
				return nil, fmt.Errorf("admission: policies: read %s: %w", c.Old.Path, err)
			}
		}
		if c.Kind != cairn.Deleted {
			if after, err = r.ReadBlob(ctx, c.New.Blob); err != nil && !errors.Is(err, cairn.ErrPurged) {
				return nil, fmt.Errorf("admission: policies: read %s: %w", c.Path, err)
			}
		}
		a, rm := lineDelta(before, after)
		f["added"], f["removed"] = a, rm
		added, removed = added+a, removed+rm
		page := lint.Classify(c.Path) == lint.KindPage || c.Kind == cairn.Renamed && lint.Classify(c.Old.Path) == lint.KindPage
		if page {
			pages++
			if before != nil {
				p := markdown.Parse(c.Old.Path, before)
				f["type_before"], f["frontmatter_before"] = p.Type, frontmatterOf(p)
			}
			if c.Kind != cairn.Deleted {
				p := markdown.Parse(c.Path, after)
				f["type"], f["frontmatter"] = p.Type, frontmatterOf(p)
				var missing []any
				for _, s := range p.Sources {
					if _, err := r.Get(ctx, result, s); cairn.ErrorCode(err) == cairn.ENOTFOUND {
						missing = append(missing, s)
					} else if err != nil && cairn.ErrorCode(err) != cairn.EINVALID {
						return nil, fmt.Errorf("admission: policies: look up %s: %w", s, err)
					}
				}
				if missing != nil {
					f["missing_sources"] = missing
				}
			} else {
				f["type"] = f["type_before"]
			}
		}
		files = append(files, f)
	}
	in := &policyInput{vars: map[string]any{
		"principal": string(req.Principal), "origin": string(req.Origin), "route": req.Route,
		"files": files,
		"diff":  map[string]int64{"files": int64(len(changes)), "pages": pages, "added": added, "removed": removed},
	}}
	in.setFindings(fs)
	return in, nil
}

// setFindings gives the policies the other gates' findings.
func (in *policyInput) setFindings(fs []cairn.Finding) {
	findings := make([]any, 0, len(fs))
	for _, x := range fs {
		findings = append(findings, map[string]string{"gate": x.Gate, "rule": x.Rule, "page": x.Page, "subject": x.Subject, "severity": x.Severity})
	}
	in.vars["findings"] = findings
}

// frontmatterOf is a page's frontmatter for CEL: never null.
func frontmatterOf(p *markdown.Page) map[string]any {
	if p.Frontmatter == nil {
		return map[string]any{}
	}
	return p.Frontmatter
}

// lineDelta counts the lines of after that before lacks and the lines of
// before that after lacks, as multisets: the size of the change, without
// the cost of a diff.
func lineDelta(before, after []byte) (added, removed int64) {
	count := map[string]int{}
	for l := range bytes.Lines(before) {
		count[string(l)]++
	}
	for l := range bytes.Lines(after) {
		if count[string(l)] > 0 {
			count[string(l)]--
			continue
		}
		added++
	}
	for _, n := range count {
		removed += int64(n)
	}
	return added, removed
}

// gatePolicies evaluates the policies on a change and returns the
// findings of those that apply, each with its policy's verdict. A policy
// that fails to evaluate (a key it reads is missing, it runs past its cost
// limit) holds the change, with what went wrong.
func (p *Policy) gatePolicies(in *policyInput) []cairn.Finding {
	var out []cairn.Finding
	for _, c := range p.Policies {
		v, _, err := c.prg.Eval(in.vars)
		switch {
		case err != nil:
			out = append(out, cairn.Finding{Gate: GatePolicy, Rule: c.Name, Subject: "error", Verdict: cairn.Hold,
				Message: fmt.Sprintf("the policy %s could not be evaluated (%v); held for a person to judge, and the policy to fix", c.Name, err)})
		case v.Value() == true:
			out = append(out, cairn.Finding{Gate: GatePolicy, Rule: c.Name, Subject: c.Name, Verdict: c.Verdict, Message: c.Message})
		}
	}
	return out
}

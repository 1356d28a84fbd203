package main

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestFakePolicyScript checks that the policy phase's script is the v0.9 script, every
// chunk at once, even when the a2a phase's is paced.
func TestFakePolicyScript(t *testing.T) {
	f, err := newFakeModel("127.0.0.1:0", 0, 0, 0, 1, a2uiPace{chunkTokens: 16, tokensPerS: 150, a2aTokensPerS: 1000})
	if err != nil {
		t.Fatal(err)
	}
	fr, v09 := f.a2uiFor([]byte(`{"text":"`+policyText+`"}`)), f.a2ui[a2aVersion]
	f.Close()
	if fr == nil || fr != f.policy || fr.script != v09.script || len(fr.frames) != len(v09.frames) ||
		string(fr.frames[0]) != string(v09.frames[0]) || len(fr.at) != len(fr.frames) {
		t.Fatalf("%+v", fr)
	}
	if last := fr.at[len(fr.at)-1]; last != 0 {
		t.Fatalf("paced: last chunk at %s", last)
	}
	if last := f.a2a.at[len(f.a2a.at)-1]; last == 0 {
		t.Fatal("the a2a phase's pace changed")
	}
}

// TestPolicyPhase runs the policy phase briefly against the real server: both servers'
// turns of both kinds succeed with the same messages, and every CPU figure is there.
func TestPolicyPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	began := time.Now()
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "policy", "--policy-rounds", "1", "--policy-turns", "5")
	t.Logf("phase and report in %s", time.Since(began).Round(time.Millisecond))
	p := rep.Policy
	if p == nil || p.Version != "v0.9" || p.Components < a2uiMinComponents || p.A2UIMessages < 2 || p.GenUISurfaces < 1 ||
		p.TurnsPerRound != 5 || p.Rounds != 1 || p.TargetRatio != 1.05 || len(p.FirstPerRound) != 1 || len(p.Servers) != 2 {
		t.Fatalf("policy: %+v", p)
	}
	if on, off := p.Servers[0], p.Servers[1]; on.Name != "on" || len(on.Flags) != 0 || off.Name != "off" ||
		strings.Join(off.Flags, " ") != "--policy-off all" || on.PID == 0 || off.PID == 0 || on.PID == off.PID {
		t.Fatalf("servers: %+v", p.Servers)
	}
	for _, k := range []PolicyKind{p.A2UI, p.GenUI} {
		if k.TurnsPerServer != 5 || k.OnCPUPerTurnMS == nil || *k.OnCPUPerTurnMS <= 0 || k.OffCPUPerTurnMS == nil || *k.OffCPUPerTurnMS <= 0 ||
			len(k.OnCPUPerTurnRoundsMS) != 1 || len(k.OffCPUPerTurnRoundsMS) != 1 || len(k.CPURatioRounds) != 1 ||
			k.CPURatio == nil || *k.CPURatio <= 0 || k.CPURatioOfMedians == nil || k.AddedCPUPerTurnMS == nil ||
			k.OnEndMS.Median <= 0 || k.OffEndMS.Median <= 0 || k.Met != (*k.CPURatio <= 1.05) {
			t.Errorf("%s: %+v", k.Kind, k)
		}
	}
	if p.A2UI.Kind != "A2UI" || p.GenUI.Kind != "genui" || p.Pass != (p.A2UI.Met && p.GenUI.Met) {
		t.Fatalf("kinds: %+v", p)
	}
	if s := rep.Summary; s.PolicyA2UICPURatio == nil || *s.PolicyA2UICPURatio != *p.A2UI.CPURatio ||
		s.PolicyGenUICPURatio == nil || *s.PolicyGenUICPURatio != *p.GenUI.CPURatio {
		t.Fatalf("summary: %+v", s)
	}
	if st := rep.Settings; st.PolicyTurns != 5 || st.PolicyRounds != 1 {
		t.Fatalf("settings: %+v", st)
	}
	if rep.Target.PID == 0 || rep.Target.UsesFakeModel == nil || !*rep.Target.UsesFakeModel {
		t.Fatalf("target: %+v", rep.Target)
	}
	for _, v := range p.Servers {
		if _, err := readCPU(v.PID); err == nil {
			t.Errorf("server %s (pid %d) is still there", v.Name, v.PID)
		}
	}
	for _, want := range []string{"POLICY (", "--policy-off all", "the same on both servers", "ratio of medians", targetPolicy} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

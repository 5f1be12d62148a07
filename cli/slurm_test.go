package cli

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"onic/testbenches/tools"
)

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// singleNodeSlurm starts munge and a one-node Slurm (slurmctld and
// slurmd, Debian's slurm-wlm) in dir, as a cluster's administrator
// would, and returns the environment for sbatch; the daemons stop at
// the test's end.
func singleNodeSlurm(t *testing.T, dir string) []string {
	t.Helper()
	for _, d := range []string{"state", "spool", "munge", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	run := func(name string, args ...string) {
		t.Helper()
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	key, sock := filepath.Join(dir, "munge", "munge.key"), filepath.Join(dir, "munge", "munge.sock")
	run("mungekey", "--create", "--keyfile="+key, "--force")
	run("munged", "--force", "--key-file="+key, "--socket="+sock, "--pid-file="+filepath.Join(dir, "munge", "munged.pid"),
		"--log-file="+filepath.Join(dir, "munge", "munged.log"), "--seed-file="+filepath.Join(dir, "munge", "seed"))
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "slurm.conf")
	err = os.WriteFile(conf, []byte(fmt.Sprintf(`ClusterName=onic
SlurmctldHost=%[1]s
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[2]s
CredType=cred/munge
StateSaveLocation=%[3]s/state
SlurmdSpoolDir=%[3]s/spool
SlurmctldPidFile=%[3]s/slurmctld.pid
SlurmdPidFile=%[3]s/slurmd.pid
SlurmctldPort=%[4]d
SlurmdPort=%[5]d
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SlurmctldLogFile=%[3]s/log/slurmctld.log
SlurmdLogFile=%[3]s/log/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName=%[1]s CPUs=2 State=UNKNOWN
PartitionName=onic Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP
`, host, sock, dir, freePort(t), freePort(t))), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "SLURM_CONF="+conf)
	t.Cleanup(func() {
		c := exec.Command("scontrol", "shutdown")
		c.Env = env
		c.Run()
		time.Sleep(500 * time.Millisecond)
		var pids []int
		for _, pid := range []string{filepath.Join(dir, "slurmd.pid"), filepath.Join(dir, "slurmctld.pid"), filepath.Join(dir, "munge", "munged.pid")} {
			if b, err := os.ReadFile(pid); err == nil {
				var p int
				fmt.Sscan(string(b), &p)
				if p > 0 {
					syscall.Kill(p, syscall.SIGTERM)
					pids = append(pids, p)
				}
			}
		}
		// Wait for them to go: munged removes its socket and files as it
		// exits, and the test's directory is removed after this (it
		// once found munge's directory not yet empty).
		for _, p := range pids {
			for i := 0; i < 100 && syscall.Kill(p, 0) == nil; i++ {
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
	for _, d := range []string{"slurmctld", "slurmd"} {
		c := exec.Command(d, "-f", conf)
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", d, err, out)
		}
	}
	for i := 0; ; i++ {
		c := exec.Command("sinfo", "-h", "-o", "%T")
		c.Env = env
		out, _ := c.Output()
		if strings.TrimSpace(string(out)) == "idle" {
			return env
		}
		if i == 100 {
			log, _ := os.ReadFile(filepath.Join(dir, "log", "slurmctld.log"))
			t.Fatalf("the Slurm node is not idle after 10 s (sinfo: %q)\n%s", out, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEmuSweepOnSlurm: the sweep of TestEmuSweep through a real Slurm —
// Debian's slurm-wlm and munge, one node, started here — by the scripts
// --slurm writes: submit.sh submits the job array and the collect step,
// and the collected results.json is the local run's JSON byte for byte.
func TestEmuSweepOnSlurm(t *testing.T) {
	tools.Long(t)
	for _, tool := range []string{"sbatch", "slurmctld", "slurmd", "munged", "mungekey"} {
		tools.Require(t, tool)
	}
	tools.RequireRoot(t, "starting slurmctld and slurmd")
	root := checkoutOnic(t)
	onicBin := filepath.Join(root, "bin", "onic")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte(sweepSpec), 0o644); err != nil {
		t.Fatal(err)
	}
	local, err := exec.Command(onicBin, "emu", "sweep", spec, "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := singleNodeSlurm(t, filepath.Join(dir, "slurm"))
	out := filepath.Join(dir, "sweep")
	if b, err := exec.Command(onicBin, "emu", "sweep", spec, "--slurm", out).CombinedOutput(); err != nil {
		t.Fatalf("--slurm: %v\n%s", err, b)
	}
	sub := exec.Command("sh", filepath.Join(out, "submit.sh"))
	sub.Env = env
	ids, err := sub.CombinedOutput()
	if err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, ids)
	}
	for i := 0; ; i++ {
		if b, err := os.ReadFile(filepath.Join(out, "results.json")); err == nil && len(b) > 0 {
			time.Sleep(200 * time.Millisecond) // (written whole: compare the final file)
			b, _ = os.ReadFile(filepath.Join(out, "results.json"))
			if string(b) != string(local) {
				t.Fatalf("Slurm's results.json differs from the local run's")
			}
			t.Logf("jobs %s: 4 points and the collect step on Slurm, results identical to the local run's", strings.TrimSpace(string(ids)))
			return
		}
		if i == 600 {
			q := exec.Command("squeue")
			q.Env = env
			sq, _ := q.CombinedOutput()
			logs, _ := filepath.Glob(filepath.Join(out, "*.log"))
			t.Fatalf("no results.json after 60 s; squeue:\n%s\nlogs: %v", sq, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

"""Checks deploy/kubernetes beyond the OpenAPI schema: every resource file is
listed in its kustomization, every container runs as non-root with a
read-only root filesystem, no privilege escalation and no capabilities,
netserver's --data-ports range is exactly what its pods and Services expose
(TCP and UDP), and its limits options are set. Prints one line per problem;
exit status 1 if there is any."""
import pathlib
import sys

import yaml

root = pathlib.Path(sys.argv[1])
problems = []
docs = {}
for path in sorted(root.rglob("*.yaml")):
    for doc in yaml.safe_load_all(path.read_text()):
        if doc:
            docs.setdefault(path, []).append(doc)

for path, items in docs.items():
    for doc in items:
        if doc.get("kind") == "Kustomization":
            listed = {str((path.parent / r).resolve()) for r in doc.get("resources", [])}
            for sibling in path.parent.glob("*.yaml"):
                if sibling.name != "kustomization.yaml" and str(sibling.resolve()) not in listed:
                    problems.append(f"{sibling}: not in {path}")

def pod_spec(doc):
    spec = doc.get("spec", {})
    return spec.get("template", {}).get("spec") if "template" in spec else None

def data_ports(args):
    if "--data-ports" not in args:
        return None
    low, high = args[args.index("--data-ports") + 1].split("-")
    return set(range(int(low), int(high) + 1))

service_ports = {}
for path, items in docs.items():
    for doc in items:
        if doc.get("kind") == "Service":
            ports = {(p["port"], p.get("protocol", "TCP")) for p in doc["spec"]["ports"]}
            service_ports[doc["metadata"]["name"]] = ports
for path, items in docs.items():
    for doc in items:
        spec = pod_spec(doc)
        if spec is None:
            continue
        for c in spec.get("containers", []):
            where = f"{path}: {doc['kind']}/{doc['metadata']['name']} container {c['name']}"
            sc = c.get("securityContext", {})
            for key, want in [("runAsNonRoot", True), ("readOnlyRootFilesystem", True),
                              ("allowPrivilegeEscalation", False)]:
                if sc.get(key) is not want:
                    problems.append(f"{where}: securityContext.{key} is not {want}")
            if sc.get("privileged"):
                problems.append(f"{where}: privileged")
            if sc.get("capabilities", {}).get("drop") != ["ALL"]:
                problems.append(f"{where}: capabilities are not all dropped")
            if "cpu" in c.get("resources", {}).get("limits", {}):
                problems.append(f"{where}: a CPU limit (throttling distorts the results)")
            if not c.get("resources", {}).get("requests"):
                problems.append(f"{where}: no resource requests")
            args = c.get("args", [])
            if args and args[0] == "netserver":
                for option in ("--max-tests", "--max-connections"):
                    if option not in args:
                        problems.append(f"{where}: netserver without {option}")
                ranged = data_ports(args)
                if ranged is None:
                    problems.append(f"{where}: netserver without --data-ports")
                    continue
                exposed = {(p["containerPort"], p.get("protocol", "TCP")) for p in c.get("ports", [])}
                wanted = {(p, proto) for p in ranged for proto in ("TCP", "UDP")} | {(12865, "TCP")}
                if exposed != wanted:
                    problems.append(f"{where}: exposes {sorted(exposed ^ wanted)} unlike --data-ports")
                for name, ports in service_ports.items():
                    if ports != wanted:
                        problems.append(f"Service {name}: ports differ from netserver's --data-ports")

for p in problems:
    print(p)
print(f"{sum(len(v) for v in docs.values())} documents checked, {len(problems)} problems")
sys.exit(1 if problems else 0)

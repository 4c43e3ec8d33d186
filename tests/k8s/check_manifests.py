"""Checks deploy/kubernetes beyond the OpenAPI schema: every resource file is
listed in its kustomization, every container runs as non-root with a
read-only root filesystem, no privilege escalation and no capabilities,
netserver's --data-ports range is exactly what its pods and Services expose
(TCP and UDP), and its limits options are set; RBAC grants only reads and
binds what exists; a pod holding a service-account token runs as its own
account; netagg and matrix --k8s-selector (or the old --hosts-k8s) have a selector that
picks netserver pods, a service account allowed to list them, and their node
and pod name from the downward API; and a matrix or experiment Job has a
writable /tmp. Prints one line per problem; exit status 1 if there is any."""
import pathlib
import re
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

# RBAC: read-only rules, and bindings to roles and accounts that exist.
READS = {"get", "list", "watch"}
kinds = {}
for path, items in docs.items():
    for doc in items:
        meta = doc.get("metadata", {})
        kinds.setdefault(doc.get("kind"), {})[(meta.get("namespace"), meta.get("name"))] = (path, doc)
for kind in ("Role", "ClusterRole"):
    for (ns, name), (path, doc) in kinds.get(kind, {}).items():
        for rule in doc.get("rules", []):
            if not set(rule.get("verbs", [])) <= READS:
                problems.append(f"{path}: {kind}/{name} grants {sorted(set(rule['verbs']) - READS)}")
grants = {}  # (namespace, service account) -> {(resource, verb)}, namespace None for cluster-wide
for kind, role_kind in (("RoleBinding", "Role"), ("ClusterRoleBinding", "ClusterRole")):
    for (ns, name), (path, doc) in kinds.get(kind, {}).items():
        ref = doc["roleRef"]
        role = kinds.get(ref["kind"], {}).get((ns if ref["kind"] == "Role" else None, ref["name"]))
        if role is None:
            problems.append(f"{path}: {kind}/{name} binds {ref['kind']}/{ref['name']}, which is not here")
            continue
        for subject in doc.get("subjects", []):
            if subject["kind"] != "ServiceAccount":
                continue
            account = (subject.get("namespace"), subject["name"])
            if account not in kinds.get("ServiceAccount", {}):
                problems.append(f"{path}: {kind}/{name} binds ServiceAccount {account}, which is not here")
            scope = ns if kind == "RoleBinding" else None
            for rule in role[1].get("rules", []):
                for resource in rule.get("resources", []):
                    for verb in rule.get("verbs", []):
                        grants.setdefault(account, set()).add((scope, resource, verb))

SELECTOR_TERM = re.compile(r"\s*([\w./-]+)\s*(?:(==|=|!=)\s*([\w./-]*)|\s+(in|notin)\s*\(([^)]*)\))\s*(?:,|$)")

def selects(selector, labels):
    """A label selector (a=b, a!=b, a in (x,y), a notin (x,y), joined by
    commas) against labels; a selector that does not parse selects nothing."""
    pos, ok = 0, True
    while pos < len(selector):
        m = SELECTOR_TERM.match(selector, pos)
        if not m or m.end() == pos:
            return False
        key, op, value, set_op, values = m.groups()
        have = labels.get(key)
        if op in ("=", "=="):
            ok &= have == value
        elif op == "!=":
            ok &= have != value
        else:
            members = {v.strip() for v in values.split(",")}
            ok &= (have in members) == (set_op == "in")
        pos = m.end()
    return ok and pos > 0

netserver_labels = [doc["spec"]["template"]["metadata"].get("labels", {})
                    for items in docs.values() for doc in items
                    if doc.get("kind") == "DaemonSet"
                    and any(c.get("args", [""])[0] == "netserver"
                            for c in doc["spec"]["template"]["spec"].get("containers", []))]
for path, items in docs.items():
    for doc in items:
        spec = pod_spec(doc)
        if spec is None:
            continue
        ns = doc["metadata"].get("namespace")
        where = f"{path}: {doc['kind']}/{doc['metadata']['name']}"
        account = spec.get("serviceAccountName", "default")
        if spec.get("automountServiceAccountToken") is not False and account == "default":
            problems.append(f"{where}: mounts the default service account's token")
        if account != "default" and (ns, account) not in kinds.get("ServiceAccount", {}):
            problems.append(f"{where}: service account {account} is not here")
        for c in spec.get("containers", []):
            args = c.get("args", [])
            if args[:2] in (["netagg", "matrix"], ["netagg", "experiment"]):
                # The root is read-only; a multi-stream cell writes its
                # streams' latency histograms in the temporary directory.
                mounts = {m["mountPath"] for m in c.get("volumeMounts", [])}
                if "/tmp" not in mounts:
                    problems.append(f"{where}: no writable /tmp for the streams' latency histograms")
            option = next((o for o in ("--k8s-selector", "--hosts-k8s") if o in args), None)
            if not args or args[0] != "netagg" or option is None:
                continue
            selector = args[args.index(option) + 1]
            if not any(selects(selector, labels) for labels in netserver_labels):
                problems.append(f"{where}: {option} {selector} picks no netserver DaemonSet's pods")
            if spec.get("automountServiceAccountToken") is not True:
                problems.append(f"{where}: {option} without a service-account token")
            granted = grants.get((ns, account), set())
            for resource, verb in (("pods", "list"), ("pods", "get"), ("services", "list")):
                if (ns, resource, verb) not in granted and (None, resource, verb) not in granted:
                    problems.append(f"{where}: service account {account} may not {verb} {resource}")
            fields = {e["name"]: e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
                      for e in c.get("env", [])}
            for name, field in (("NODE_NAME", "spec.nodeName"), ("POD_NAME", "metadata.name")):
                if fields.get(name) != field:
                    problems.append(f"{where}: {name} is not {field} from the downward API")

for p in problems:
    print(p)
print(f"{sum(len(v) for v in docs.values())} documents checked, {len(problems)} problems")
sys.exit(1 if problems else 0)

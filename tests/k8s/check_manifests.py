"""Checks deploy/kubernetes beyond the OpenAPI schema: every resource file is
listed in its kustomization, every container runs as non-root with a
read-only root filesystem, no privilege escalation and no capabilities,
netserver's --data-ports range is exactly what its pods and Services expose
(TCP and UDP), and its limits options are set; RBAC grants only reads and
binds what exists; a pod holding a service-account token runs as its own
account; netagg and matrix --k8s-selector (or the old --hosts-k8s) have a selector that
picks netserver pods, a service account allowed to list them, and their node
and pod name from the downward API; and a matrix or experiment Job has a
writable /tmp. The mesh: netserver's --mesh-key and --mesh-peers come
together, the key from a read-only Secret volume readable by the
container's group only, the peers CIDRs (from a ConfigMap that is here) and
none of them every address; `netagg mesh` reads the netservers' Secret and
picks netservers with the opt-in, with a service account that may list
nodes (the zones); a mesh CronJob never runs two at once; and no Secret
here holds a usable key. netagg watch: a single-replica Deployment that
recreates, its database on a PersistentVolumeClaim, a writable /tmp, a
grace period longer than a run, --listen on a container port that the
Prometheus annotations and a Service name, and a ServiceMonitor that picks
that Service's /metrics port. A file named *-example.yaml is an example: it is
checked, and must not be in its kustomization (applying it would replace
what the operator made). Prints one line per problem; exit status 1 if
there is any."""
import base64
import ipaddress
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
        if doc.get("kind") == "Kustomization" or path.name == "kustomization.yaml":
            listed = {str((path.parent / r).resolve()) for r in doc.get("resources", [])}
            for sibling in path.parent.glob("*.yaml"):
                example = sibling.name.endswith("-example.yaml")
                if sibling.name == "kustomization.yaml":
                    continue
                if example and str(sibling.resolve()) in listed:
                    problems.append(f"{sibling}: an example in {path} (applying it replaces the operator's own)")
                elif not example and str(sibling.resolve()) not in listed:
                    problems.append(f"{sibling}: not in {path}")

def pod_spec(doc):
    spec = doc.get("spec", {})
    if "jobTemplate" in spec:
        spec = spec["jobTemplate"].get("spec", {})
    return spec.get("template", {}).get("spec") if "template" in spec else None

def workloads():
    """Every resource with a pod spec: (path, doc, its pod spec, namespace,
    where, the way problems name it)."""
    for path, items in docs.items():
        for doc in items:
            spec = pod_spec(doc)
            if spec is not None:
                yield (path, doc, spec, doc["metadata"].get("namespace"),
                       f"{path}: {doc['kind']}/{doc['metadata']['name']}")

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
            service_ports[doc["metadata"]["name"]] = (ports, doc["spec"].get("selector") or {})
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
                pod_labels = doc["spec"]["template"]["metadata"].get("labels", {})
                for name, (ports, selector) in service_ports.items():
                    fronts = selector and all(pod_labels.get(k) == v for k, v in selector.items())
                    if fronts and ports != wanted:
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
for path, doc, spec, ns, where in workloads():
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

# The mesh opt-in: the key from a Secret, the peers the cluster's networks.
KEY_MIN = 16  # netserver refuses a shorter key (bytes, trailing whitespace off)
config_maps = {(doc["metadata"].get("namespace"), doc["metadata"]["name"]): doc.get("data", {})
               for items in docs.values() for doc in items if doc.get("kind") == "ConfigMap"}
for path, items in docs.items():
    for doc in items:
        if doc.get("kind") != "Secret":
            continue
        values = dict(doc.get("stringData") or {})
        for key, value in (doc.get("data") or {}).items():
            try:
                values[key] = base64.b64decode(value).decode("utf-8", "replace")
            except ValueError:
                values[key] = ""
        for key, value in values.items():
            if len(str(value).rstrip().encode()) >= KEY_MIN:
                problems.append(f"{path}: Secret/{doc['metadata']['name']} holds a usable {key}: "
                                "anyone with this repository has it (keep a placeholder netserver refuses)")

def option(args, name):
    return args[args.index(name) + 1] if name in args[:-1] else None

def key_secret(where, spec, container, key_path):
    """The Secret a --mesh-key file comes from, or None with the problem said."""
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        prefix = mount["mountPath"].rstrip("/") + "/"
        if not key_path.startswith(prefix):
            continue
        secret = volumes.get(mount["name"], {}).get("secret")
        if secret is None:
            problems.append(f"{where}: --mesh-key {key_path} is not on a Secret volume")
            return None
        if not mount.get("readOnly"):
            problems.append(f"{where}: the mesh key's volume is not mounted readOnly")
        mode = secret.get("defaultMode", 0o644)
        if mode & 0o007:
            problems.append(f"{where}: the mesh key is readable by others (defaultMode {mode:#o})")
        fs_group = (spec.get("securityContext") or {}).get("fsGroup")
        if not mode & 0o040 or fs_group is None:
            problems.append(f"{where}: the mesh key is not readable by the container's non-root user "
                            "(defaultMode group-readable and the pod's fsGroup set)")
        items = {i["path"]: i["key"] for i in secret.get("items", [])}
        name = key_path[len(prefix):]
        if items and name not in items:
            problems.append(f"{where}: --mesh-key {key_path}: the Secret's items have no {name}")
        return secret.get("secretName")
    problems.append(f"{where}: --mesh-key {key_path} is on no volume (the root is read-only; a Secret)")
    return None

def peers_value(where, ns, container, value):
    """--mesh-peers as written, or through $(VAR) from a ConfigMap here."""
    ref = re.fullmatch(r"\$\((\w+)\)", value)
    if not ref:
        return value
    env = {e["name"]: e for e in container.get("env", [])}.get(ref.group(1), {})
    if "value" in env:
        return env["value"]
    key = env.get("valueFrom", {}).get("configMapKeyRef")
    if key is None:
        problems.append(f"{where}: --mesh-peers {value}: no such variable with a value or a ConfigMap key")
        return None
    data = config_maps.get((ns, key["name"]))
    if data is None or key["key"] not in data:
        problems.append(f"{where}: --mesh-peers {value}: ConfigMap {key['name']} with key {key['key']} is not here")
        return None
    return data[key["key"]]

mesh_labels, mesh_secrets = [], set()
for path, doc, spec, ns, where in workloads():
    for c in spec.get("containers", []):
        args = c.get("args", [])
        if not args or args[0] != "netserver":
            continue
        key, peers = option(args, "--mesh-key"), option(args, "--mesh-peers")
        if key is None and peers is None:
            continue
        if key is None or peers is None:
            problems.append(f"{where}: --mesh-key and --mesh-peers go together (netserver refuses either alone)")
            continue
        secret = key_secret(where, spec, c, key)
        if secret:
            mesh_secrets.add((ns, secret))
        if doc.get("kind") == "DaemonSet":
            mesh_labels.append(doc["spec"]["template"]["metadata"].get("labels", {}))
        nets = peers_value(where, ns, c, peers)
        for net in nets.split(",") if nets is not None else []:
            try:
                network = ipaddress.ip_network(net.strip(), strict=False)
            except ValueError:
                problems.append(f"{where}: --mesh-peers {net!r} is not an address or CIDR")
                continue
            if network.prefixlen == 0:
                problems.append(f"{where}: --mesh-peers {net} allows every address: name the pod and node CIDRs")

for path, doc, spec, ns, where in workloads():
    coordinators = [c for c in spec.get("containers", []) if c.get("args", [])[:2] == ["netagg", "mesh"]]
    for c in coordinators:
        args = c["args"]
        key = option(args, "--mesh-key")
        if key is None:
            problems.append(f"{where}: netagg mesh without --mesh-key")
        else:
            secret = key_secret(where, spec, c, key)
            if secret and (ns, secret) not in mesh_secrets:
                problems.append(f"{where}: --mesh-key from Secret {secret}, which no mesh netserver reads")
        selector = option(args, "--k8s-selector")
        if selector is not None:
            if not any(selects(selector, labels) for labels in mesh_labels):
                problems.append(f"{where}: --k8s-selector {selector} picks no netserver with the mesh opt-in")
            account = spec.get("serviceAccountName", "default")
            if (None, "nodes", "list") not in grants.get((ns, account), set()):
                problems.append(f"{where}: service account {account} may not list nodes (their zones)")
    if coordinators and doc.get("kind") == "CronJob" and doc["spec"].get("concurrencyPolicy") != "Forbid":
        problems.append(f"{where}: a mesh CronJob without concurrencyPolicy: Forbid (two meshes disturb each other)")

def duration_seconds(text):
    """A watch duration ("90", "15m", "1h", "90d") in seconds, None if not one."""
    m = re.fullmatch(r"(\d+)([smhd]?)", text or "")
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2)] if m else None

services = [(path, doc) for path, items in docs.items() for doc in items if doc.get("kind") == "Service"]
watched_services = set()
for path, doc, spec, ns, where in workloads():
    for c in spec.get("containers", []):
        args = c.get("args", [])
        if args[:2] != ["netagg", "watch"]:
            continue
        if doc.get("kind") != "Deployment":
            problems.append(f"{where}: netagg watch runs until stopped: a Deployment, not a {doc.get('kind')}")
        elif doc["spec"].get("replicas", 1) != 1 or doc["spec"].get("strategy", {}).get("type") != "Recreate":
            problems.append(f"{where}: two watchers would measure over each other: replicas 1, strategy Recreate")
        mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
        claims = {v["name"] for v in spec.get("volumes", []) if "persistentVolumeClaim" in v}
        store = next((a.split("=", 1)[1] for a in args if a.startswith("--store=")), option(args, "--db"))
        on_claim = store and any(store.startswith(m.rstrip("/") + "/") and n in claims for m, n in mounts.items())
        if not on_claim:
            problems.append(f"{where}: the results database ({store}) is not on a PersistentVolumeClaim")
        if "/tmp" not in mounts:
            problems.append(f"{where}: no writable /tmp for its runs")
        length = duration_seconds(option(args, "--duration") or "10")
        grace = spec.get("terminationGracePeriodSeconds", 30)
        if length is not None and grace < length + 30:
            problems.append(f"{where}: terminationGracePeriodSeconds {grace} < the run's length + 30 s")
        listen = option(args, "--listen")
        if listen is None:
            problems.append(f"{where}: netagg watch without --listen (nothing to scrape)")
            continue
        port = int(listen.rsplit(":", 1)[1])
        named = {p.get("name"): p["containerPort"] for p in c.get("ports", [])}
        if port not in named.values():
            problems.append(f"{where}: --listen port {port} is not a container port")
        notes = doc["spec"]["template"]["metadata"].get("annotations", {})
        if notes.get("prometheus.io/scrape") != "true" or notes.get("prometheus.io/port") != str(port):
            problems.append(f"{where}: no prometheus.io/scrape and port {port} annotations")
        labels = doc["spec"]["template"]["metadata"].get("labels", {})
        for spath, service in services:
            selector = service["spec"].get("selector") or {}
            if not selector or any(labels.get(k) != v for k, v in selector.items()):
                continue
            watched_services.add(service["metadata"]["name"])
            for sp in service["spec"]["ports"]:
                target = sp.get("targetPort", sp["port"])
                if named.get(target, target) != port:
                    problems.append(f"{spath}: Service port {sp['port']} does not reach --listen port {port}")
for path, items in docs.items():
    for doc in items:
        if doc.get("kind") != "ServiceMonitor":
            continue
        wanted = doc["spec"].get("selector", {}).get("matchLabels", {})
        picked = [s for _, s in services
                  if all(s["metadata"].get("labels", {}).get(k) == v for k, v in wanted.items())]
        if not picked or any(s["metadata"]["name"] not in watched_services for s in picked):
            problems.append(f"{path}: ServiceMonitor/{doc['metadata']['name']} picks no netagg watch Service")
        names = {p.get("name") for s in picked for p in s["spec"]["ports"]}
        for e in doc["spec"].get("endpoints", []):
            if e.get("port") not in names or e.get("path", "/metrics") != "/metrics":
                problems.append(f"{path}: endpoint {e} is not the watch Service's /metrics port")

for p in problems:
    print(p)
print(f"{sum(len(v) for v in docs.values())} documents checked, {len(problems)} problems")
sys.exit(1 if problems else 0)

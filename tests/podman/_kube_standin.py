"""A Kubernetes API **stand-in** for tests: ``pods`` and ``pods/exec`` in front of real Podman.

No kube-apiserver or kubelet can be installed on this project's machines, so the Kubernetes
backend is tested against this small aiohttp server on 127.0.0.1. What is real: the client
library (lightkube) and its HTTP requests, the WebSocket exec protocol (``v5.channel.k8s.io``
with the stdin close ``[255, 0]``, and ``v4.channel.k8s.io``), and the containers, which are
real Podman containers created through the pack's Podman service (libpod REST) and exec'd
through Podman's hijacked exec stream.

It serves:

- ``POST/GET/DELETE /api/v1/namespaces/{ns}/pods[/{name}]`` and ``GET .../pods`` with an
  equality ``labelSelector``: each container of the Pod becomes a Podman container
  (``runAsUser``/``runAsGroup``, ``readOnlyRootFilesystem``, ``capabilities.drop: [ALL]``,
  ``allowPrivilegeEscalation: false``, ``resources.limits`` cpu and memory, ``env``,
  ``workingDir``), each ``emptyDir`` volume a Podman named volume shared by the containers
  that mount it, and an ``emptyDir`` with ``medium: Memory`` a tmpfs of ``sizeLimit`` (one per
  container: a simplification). The Pod's ``status.phase`` and ``containerStatuses`` are read
  from Podman on every GET.
- ``GET /api/v1/namespaces/{ns}/pods/{name}/exec`` as a WebSocket: channels 0/1/2 are
  bridged to the exec's stdin/stdout/stderr, the v5 close of channel 0 half-closes stdin, and
  the end is a ``metav1.Status`` on channel 3 (``Success``, or ``Failure`` with reason
  ``NonZeroExitCode`` and an ``ExitCode`` cause). A Pod with several containers needs
  ``container=``.
- ``POST/DELETE /apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies[/{name}]``: stored
  and returned, **never enforced** (every container here has no network at all instead).

What it does NOT simulate, so what the tests against it do not show:

- admission, RBAC, ServiceAccount tokens, PodSecurity;
- scheduling, Pod phases beyond "the containers run", events, watches;
- the kubelet's streaming proxy and its idle timeouts, container restarts and ``emptyDir``
  lifetime across them, ``imagePullPolicy`` (images must already be in the local store);
- resource enforcement by the kubelet and the node's ``podPidsLimit`` (Podman applies the
  memory and CPU limits itself), ``seccompProfile`` (Podman's default profile applies);
- NetworkPolicy (stored only), RuntimeClass (gVisor, Kata), PVCs.

Run the same backend tests against a real cluster with ``nox -s kubernetes`` (``KUBECONFIG``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import struct
import threading
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from aiohttp import WSMsgType, web

from haversack_podman import PodmanService

__all__ = ["STANDIN_LABEL", "KubeStandIn", "standin_kubeconfig"]

#: Label on every Podman container and volume the stand-in creates (cleanup finds them).
STANDIN_LABEL = "haversack.kube-standin"
_V5 = "v5.channel.k8s.io"
_V4 = "v4.channel.k8s.io"
_FRAME = struct.Struct(">BxxxI")
_CPU_PERIOD = 100_000
_UNITS = {
    "Ki": 1024,
    "Mi": 1024**2,
    "Gi": 1024**3,
    "Ti": 1024**4,
    "k": 1000,
    "M": 1000**2,
    "G": 1000**3,
}


def _quantity(value: str | int) -> float:
    """A Kubernetes resource quantity (``512Mi``, ``1.5``, ``500m``) as a number."""
    text = str(value)
    if text.endswith("m"):
        return float(text[:-1]) / 1000
    for suffix in sorted(_UNITS, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * _UNITS[suffix]
    return float(text)


def _json(body: dict[str, Any], status: int = 200) -> web.Response:
    # Exactly "application/json", as the apiserver sends it: lightkube turns an error into
    # an ApiError only for that content type (aiohttp would add "; charset=utf-8").
    return web.Response(
        body=json.dumps(body).encode(), status=status, headers={"Content-Type": "application/json"}
    )


def _status(code: int, reason: str, message: str) -> web.Response:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    return _json(body, status=code)


class _Pod:
    """One Pod of the stand-in: its manifest and the Podman containers and volumes."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        self.manifest = manifest
        self.containers: dict[str, str] = {}  # container name -> Podman id
        self.volumes: list[str] = []


class KubeStandIn:
    """The stand-in server on 127.0.0.1 (an ephemeral port), run in a thread of its own.

    ``url`` is its base URL once :meth:`start` returned; :meth:`stop` removes every container
    and volume it created. ``exec_log`` lists ``(pod, container, argv)`` of every exec, so a
    test can tell which Pod served a command.
    """

    def __init__(self, service: PodmanService) -> None:
        self._service = service
        self._api = service.client.api
        self._pods: dict[tuple[str, str], _Pod] = {}
        self._policies: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = asyncio.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None
        self.url = ""
        self.exec_log: list[tuple[str, str, list[str]]] = []
        #: Applied to each Pod's manifest as it is admitted: plays a mutating admission
        #: webhook or LimitRange (a test sets it).
        self.admit: Callable[[dict[str, Any]], None] | None = None
        self.tag = uuid.uuid4().hex[:8]

    # ------------------------------------------------------------------ server
    def start(self) -> str:
        """Start serving; returns the base URL."""
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._serve(), self._loop)
        self.url = future.result(timeout=30)
        return self.url

    async def _serve(self) -> str:
        self._lock = asyncio.Lock()
        app = web.Application()
        pods = "/api/v1/namespaces/{ns}/pods"
        policies = "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies"
        app.router.add_post(pods, self._create_pod)
        app.router.add_get(pods, self._list_pods)
        app.router.add_get(pods + "/{name}", self._get_pod)
        app.router.add_delete(pods + "/{name}", self._delete_pod)
        app.router.add_get(pods + "/{name}/exec", self._exec)
        app.router.add_post(pods + "/{name}/exec", self._exec)
        app.router.add_post(policies, self._create_policy)
        app.router.add_get(policies + "/{name}", self._get_policy)
        app.router.add_delete(policies + "/{name}", self._delete_policy)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        """Remove every container and volume created, stop serving and the thread."""
        if not self._thread.is_alive():
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(timeout=60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _shutdown(self) -> None:
        for pod in list(self._pods.values()):
            await asyncio.to_thread(self._remove, pod)
        self._pods.clear()
        if self._runner is not None:
            await self._runner.cleanup()

    def pod_names(self) -> list[str]:
        """The names of the Pods that exist now (any namespace)."""
        return sorted(name for _, name in self._pods)

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on the server's loop (a test's way to inspect state safely)."""

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=30)

    # ------------------------------------------------------------------ pods
    async def _create_pod(self, request: web.Request) -> web.Response:
        ns = request.match_info["ns"]
        try:
            manifest = await request.json()
            name = manifest["metadata"]["name"]
            containers = manifest["spec"]["containers"]
        except (ValueError, KeyError, TypeError):
            return _status(400, "BadRequest", "the body is not a Pod with metadata.name")
        if not isinstance(containers, list) or not containers:
            return _status(422, "Invalid", "spec.containers: Required value")
        if self.admit is not None:
            self.admit(manifest)
        async with self._lock:
            if (ns, name) in self._pods:
                return _status(409, "AlreadyExists", f'pods "{name}" already exists')
            pod = _Pod(manifest)
            self._pods[(ns, name)] = pod
        manifest["metadata"].update(
            namespace=ns, uid=str(uuid.uuid4()), resourceVersion="1", creationTimestamp=None
        )
        try:
            await asyncio.to_thread(self._materialize, ns, pod)
        except Exception as exc:
            await asyncio.to_thread(self._remove, pod)
            async with self._lock:
                self._pods.pop((ns, name), None)
            return _status(422, "Invalid", f"the stand-in could not run the Pod: {exc}")
        body = dict(manifest, status={"phase": "Pending"})
        return _json(body, status=201)

    def _materialize(self, ns: str, pod: _Pod) -> None:
        spec = pod.manifest["spec"]
        name = pod.manifest["metadata"]["name"]
        prefix = f"hvk-{self.tag}-{ns}-{name}"
        volumes: dict[str, dict[str, Any]] = {}
        for volume in spec.get("volumes") or []:
            empty = volume.get("emptyDir")
            if empty is None:
                raise ValueError(f"volume {volume.get('name')!r}: only emptyDir is simulated")
            if empty.get("medium") == "Memory":
                size = int(_quantity(empty.get("sizeLimit", "64Mi")))
                volumes[volume["name"]] = {"tmpfs": size}
                continue
            vol_name = f"{prefix}-{volume['name']}"
            response = self._api.post(
                "/volumes/create",
                data=json.dumps({"Name": vol_name, "Label": {STANDIN_LABEL: self.tag}}),
            )
            if response.status_code >= 400:
                raise ValueError(f"volume {vol_name}: {response.text.strip()}")
            pod.volumes.append(vol_name)
            volumes[volume["name"]] = {"volume": vol_name}
        pod_security = spec.get("securityContext") or {}
        for container in spec["containers"]:
            cid = self._create_container(prefix, container, pod_security, volumes)
            pod.containers[container["name"]] = cid
        for cid in pod.containers.values():
            response = self._api.post(f"/containers/{cid}/start")
            if response.status_code >= 400:
                raise ValueError(f"start: {response.text.strip()}")

    def _create_container(
        self,
        prefix: str,
        container: dict[str, Any],
        pod_security: dict[str, Any],
        volumes: dict[str, dict[str, Any]],
    ) -> str:
        security = {**pod_security, **(container.get("securityContext") or {})}
        uid = security.get("runAsUser")
        gid = security.get("runAsGroup", uid)
        mounts: list[dict[str, Any]] = []
        named: list[dict[str, Any]] = []
        for mount in container.get("volumeMounts") or []:
            source = volumes[mount["name"]]
            options = ["ro"] if mount.get("readOnly") else ["rw"]
            if "tmpfs" in source:
                size = f"size={source['tmpfs']}"
                mounts.append(
                    {
                        "destination": mount["mountPath"],
                        "source": "tmpfs",
                        "type": "tmpfs",
                        "options": [*options, "nosuid", "nodev", size, "mode=1777"],
                    }
                )
            else:
                named.append(
                    {"Name": source["volume"], "Dest": mount["mountPath"], "Options": options}
                )
        limits = (container.get("resources") or {}).get("limits") or {}
        resource_limits: dict[str, Any] = {}
        if "memory" in limits:
            memory = int(_quantity(limits["memory"]))
            resource_limits["memory"] = {"limit": memory, "swap": memory}
        if "cpu" in limits:
            quota = int(_quantity(limits["cpu"]) * _CPU_PERIOD)
            resource_limits["cpu"] = {"quota": quota, "period": _CPU_PERIOD}
        drop = (security.get("capabilities") or {}).get("drop") or []
        spec: dict[str, Any] = {
            "name": f"{prefix}-{container['name']}",
            "image": container["image"],
            "command": [*(container.get("command") or []), *(container.get("args") or [])],
            "labels": {STANDIN_LABEL: self.tag},
            "env": {item["name"]: item.get("value", "") for item in container.get("env") or []},
            "work_dir": container.get("workingDir", "/"),
            "read_only_filesystem": bool(security.get("readOnlyRootFilesystem")),
            "read_write_tmpfs": False,
            "mounts": mounts,
            "volumes": named,
            # Stronger than a deny-all NetworkPolicy, which the stand-in does not enforce.
            "netns": {"nsmode": "none"},
            "cap_drop": ["ALL"] if "ALL" in drop else list(drop),
            "no_new_privileges": security.get("allowPrivilegeEscalation") is False,
            "resource_limits": resource_limits or None,
        }
        if uid is not None:
            spec["user"] = f"{uid}:{gid}"
        if not spec["command"]:
            raise ValueError(f"container {container['name']!r}: the stand-in needs a command")
        response = self._api.post("/containers/create", data=json.dumps(spec))
        if response.status_code >= 400:
            raise ValueError(f"container {container['name']!r}: {response.text.strip()}")
        return str(response.json()["Id"])

    def _remove(self, pod: _Pod) -> None:
        for cid in pod.containers.values():
            with contextlib.suppress(Exception):
                self._api.delete(f"/containers/{cid}", params={"force": True, "timeout": 0})
        for volume in pod.volumes:
            with contextlib.suppress(Exception):
                self._api.delete(f"/volumes/{volume}", params={"force": True})

    def _pod_status(self, pod: _Pod) -> dict[str, Any]:
        statuses = []
        phases = set()
        for name, cid in pod.containers.items():
            response = self._api.get(f"/containers/{cid}/json")
            state = response.json().get("State", {}) if response.status_code < 400 else {}
            running = bool(state.get("Running"))
            if running:
                phases.add("Running")
                detail: dict[str, Any] = {"running": {}}
            else:
                code = int(state.get("ExitCode", 1)) if state else 1
                phases.add("Succeeded" if code == 0 else "Failed")
                detail = {
                    "terminated": {"exitCode": code, "reason": "Error" if code else "Completed"}
                }
            statuses.append(
                {
                    "name": name,
                    "ready": running,
                    "restartCount": 0,
                    "image": "",
                    "imageID": "",
                    "state": detail,
                }
            )
        if not pod.containers:
            phase = "Pending"
        elif phases == {"Running"}:
            phase = "Running"
        elif "Failed" in phases:
            phase = "Failed"
        elif phases == {"Succeeded"}:
            phase = "Succeeded"
        else:
            phase = "Running"
        ready = "True" if phase == "Running" else "False"
        return {
            "phase": phase,
            "conditions": [{"type": "Ready", "status": ready}],
            "containerStatuses": statuses,
        }

    async def _get_pod(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        pod = self._pods.get((ns, name))
        if pod is None:
            return _status(404, "NotFound", f'pods "{name}" not found')
        status = await asyncio.to_thread(self._pod_status, pod)
        return _json(dict(pod.manifest, status=status))

    async def _list_pods(self, request: web.Request) -> web.Response:
        ns = request.match_info["ns"]
        wanted: dict[str, str] = {}
        for term in filter(None, request.query.get("labelSelector", "").split(",")):
            key, _, value = term.partition("=")
            wanted[key.strip()] = value.strip()
        items = []
        for (pod_ns, _), pod in list(self._pods.items()):
            labels = pod.manifest["metadata"].get("labels") or {}
            if pod_ns == ns and all(labels.get(k) == v for k, v in wanted.items()):
                status = await asyncio.to_thread(self._pod_status, pod)
                items.append(dict(pod.manifest, status=status))
        body = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items}
        return _json(body)

    async def _delete_pod(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        async with self._lock:
            pod = self._pods.pop((ns, name), None)
        if pod is None:
            return _status(404, "NotFound", f'pods "{name}" not found')
        await asyncio.to_thread(self._remove, pod)
        return _json(dict(pod.manifest, status={"phase": "Succeeded"}))

    # ------------------------------------------------------------------ network policies
    async def _create_policy(self, request: web.Request) -> web.Response:
        ns = request.match_info["ns"]
        try:
            manifest = await request.json()
            name = manifest["metadata"]["name"]
        except (ValueError, KeyError, TypeError):
            return _status(400, "BadRequest", "the body is not a NetworkPolicy")
        if (ns, name) in self._policies:
            return _status(409, "AlreadyExists", f'networkpolicies "{name}" already exists')
        manifest["metadata"]["namespace"] = ns
        self._policies[(ns, name)] = manifest
        return _json(manifest, status=201)

    async def _get_policy(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        policy = self._policies.get((ns, name))
        if policy is None:
            return _status(404, "NotFound", f'networkpolicies "{name}" not found')
        return _json(policy)

    async def _delete_policy(self, request: web.Request) -> web.Response:
        ns, name = request.match_info["ns"], request.match_info["name"]
        policy = self._policies.pop((ns, name), None)
        if policy is None:
            return _status(404, "NotFound", f'networkpolicies "{name}" not found')
        return _json(policy)

    def policy(self, ns: str, name: str) -> dict[str, Any] | None:
        """The stored NetworkPolicy ``ns/name``, or None."""
        return self._policies.get((ns, name))

    # ------------------------------------------------------------------ exec
    async def _exec(self, request: web.Request) -> web.StreamResponse:
        ns, name = request.match_info["ns"], request.match_info["name"]
        pod = self._pods.get((ns, name))
        if pod is None:
            return _status(404, "NotFound", f'pods "{name}" not found')
        container = request.query.get("container")
        if container is None:
            if len(pod.containers) != 1:
                return _status(
                    400, "BadRequest", f"a container name must be specified for pod {name}"
                )
            container = next(iter(pod.containers))
        cid = pod.containers.get(container)
        if cid is None:
            return _status(400, "BadRequest", f"container {container} is not valid for pod {name}")
        argv = request.query.getall("command", [])
        if not argv:
            return _status(400, "BadRequest", "you must specify at least 1 command")
        stdin = request.query.get("stdin") in ("true", "1")
        ws = web.WebSocketResponse(protocols=(_V5, _V4))
        ready = ws.can_prepare(request)
        if not ready.ok:
            return _status(400, "BadRequest", "exec needs a WebSocket upgrade")
        await ws.prepare(request)
        self.exec_log.append((name, container, list(argv)))
        body = {
            "AttachStdin": stdin,
            "AttachStdout": True,
            "AttachStderr": True,
            "Cmd": argv,
        }
        response = await asyncio.to_thread(
            self._api.post, f"/containers/{cid}/exec", data=json.dumps(body)
        )
        if response.status_code >= 400:
            await self._finish(ws, 1, internal=response.text.strip())
            return ws
        exec_id = str(response.json()["Id"])
        reader, writer = await self._hijack(exec_id)
        output = asyncio.ensure_future(self._to_client(reader, ws))
        incoming = asyncio.ensure_future(self._from_client(ws, writer, stdin=stdin))
        try:
            await asyncio.wait((output, incoming), return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (output, incoming):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            writer.close()
        if ws.closed or not output.done() or output.cancelled():
            return ws  # the client went away: the command goes on, as under a kubelet
        inspect = await asyncio.to_thread(self._api.get, f"/exec/{exec_id}/json")
        code = inspect.json().get("ExitCode") if inspect.status_code < 400 else None
        await self._finish(ws, 1 if code is None else int(code))
        return ws

    async def _from_client(
        self, ws: web.WebSocketResponse, writer: asyncio.StreamWriter, *, stdin: bool
    ) -> None:
        """Channel 0 to the exec's stdin; the v5 close of channel 0 half-closes it. Returns
        when the client closes the WebSocket."""
        async for message in ws:
            if message.type != WSMsgType.BINARY or not message.data:
                continue
            data: bytes = message.data
            if data[0] == 0 and stdin:
                writer.write(data[1:])
                await writer.drain()
            elif data == b"\xff\x00" and ws.ws_protocol == _V5 and writer.can_write_eof():
                writer.write_eof()

    async def _hijack(self, exec_id: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        parsed = urlparse(self._service.base_url)
        if parsed.scheme in ("unix", "http+unix"):
            reader, writer = await asyncio.open_unix_connection(parsed.path)
        else:
            reader, writer = await asyncio.open_connection(parsed.hostname, parsed.port or 80)
        body = json.dumps({"Detach": False, "Tty": False}).encode()
        writer.write(
            (
                f"POST /v1.41/exec/{exec_id}/start HTTP/1.1\r\nHost: podman\r\n"
                "Content-Type: application/json\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            ).encode()
            + body
        )
        await writer.drain()
        await reader.readuntil(b"\r\n\r\n")
        return reader, writer

    async def _to_client(self, reader: asyncio.StreamReader, ws: web.WebSocketResponse) -> None:
        """Podman's 8-byte framed stdout/stderr to WebSocket channels 1/2, until EOF; the
        stream's end makes the exec handler send the status and close."""
        try:
            while True:
                header = await reader.readexactly(_FRAME.size)
                stream, size = _FRAME.unpack(header)
                payload = await reader.readexactly(size)
                if stream in (1, 2) and payload and not ws.closed:
                    await ws.send_bytes(bytes((stream,)) + payload)
        except (asyncio.IncompleteReadError, ConnectionError):
            return

    async def _finish(self, ws: web.WebSocketResponse, code: int, internal: str = "") -> None:
        if internal:
            status: dict[str, Any] = {
                "metadata": {},
                "status": "Failure",
                "message": internal,
                "reason": "InternalError",
            }
        elif code == 0:
            status = {"metadata": {}, "status": "Success"}
        else:
            status = {
                "metadata": {},
                "status": "Failure",
                "message": f"command terminated with non-zero exit code: exit code {code}",
                "reason": "NonZeroExitCode",
                "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
            }
        await ws.send_bytes(b"\x03" + json.dumps(status).encode())
        await ws.close()


def standin_kubeconfig(url: str, namespace: str = "default") -> str:
    """A kubeconfig (YAML is a superset of JSON) that points a client at the stand-in."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "standin",
            "clusters": [{"name": "standin", "cluster": {"server": url}}],
            "users": [{"name": "standin", "user": {"token": "standin"}}],
            "contexts": [
                {
                    "name": "standin",
                    "context": {"cluster": "standin", "user": "standin", "namespace": namespace},
                }
            ],
        }
    )

#!/usr/bin/env bash
# Benchmark: `snowctl import-images` against `skopeo copy` (image by image, one run), registry to
# registry on loopback, first copy and a re-run with nothing new.
#   crates/images/bench/import-vs-skopeo.sh [BINARY]   (default: target/release/snowctl)
# BINARY is `snowctl` or the library's example `import`
# (`cargo build --release -p snow-images --example import` → target/release/examples/import,
# the same copy without the CLI's build cost).
# Needs docker-registry, skopeo and python3. Image set: 20 images, 3 random layers each
# (2.5 MB × 3 = 7.5 MB an image, 150 MB in all; random, so incompressible).
set -euo pipefail
SNOWCTL=${1:-target/release/snowctl}
IMAGES=${IMAGES:-20}
LAYER_KB=${LAYER_KB:-2560}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { # name port
  mkdir -p "$work/$1"
  cat >"$work/$1/config.yml" <<CFG
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $work/$1/data}}
http: {addr: 127.0.0.1:$2, secret: bench}
CFG
  /usr/bin/docker-registry serve "$work/$1/config.yml" >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/$2) 2>/dev/null && return; sleep 0.05; done
  echo "registry $1 did not start" >&2; exit 1
}
SRC=127.0.0.1:$(port); start src "${SRC#*:}"
DST1=127.0.0.1:$(port); start dst1 "${DST1#*:}"
DST2=127.0.0.1:$(port); start dst2 "${DST2#*:}"

# An OCI layout per image with random layers, loaded into the source with skopeo (not timed).
python3 - "$work/layouts" "$IMAGES" "$LAYER_KB" <<'PY'
import hashlib, json, os, sys
root, n, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    d = os.path.join(root, f"img{i}"); b = os.path.join(d, "blobs", "sha256"); os.makedirs(b)
    def put(data):
        h = hashlib.sha256(data).hexdigest(); open(os.path.join(b, h), "wb").write(data); return "sha256:" + h, len(data)
    layers = [put(os.urandom(kb * 1024)) for _ in range(3)]
    cfg = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": [l[0] for l in layers]}, "config": {}}).encode()
    c = put(cfg)
    m = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": c[0], "size": c[1]},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": l[0], "size": l[1]} for l in layers]}).encode()
    md = put(m)
    json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md[0], "size": md[1], "annotations": {"org.opencontainers.image.ref.name": "v1"}}]}, open(os.path.join(d, "index.json"), "w"))
    open(os.path.join(d, "oci-layout"), "w").write('{"imageLayoutVersion":"1.0.0"}')
PY
list="$work/images.txt"
for i in $(seq 0 $((IMAGES - 1))); do
  skopeo copy -q --insecure-policy --dest-tls-verify=false "oci:$work/layouts/img$i:v1" "docker://$SRC/bench/img$i:v1"
  echo "public.ecr.aws/bench/img$i:v1" >>"$list"
done

now() { date +%s.%N; }
skopeo_run() {
  for i in $(seq 0 $((IMAGES - 1))); do
    skopeo copy -q --insecure-policy --src-tls-verify=false --dest-tls-verify=false \
      "docker://$SRC/bench/img$i:v1" "docker://$DST1/mirror/bench/img$i:v1"
  done
}
snowctl_run() {
  if [[ $(basename "$SNOWCTL") == import ]]; then
    "$SNOWCTL" "$list" "$SRC" "$DST2/mirror" >/dev/null
    return
  fi
  "$SNOWCTL" import-images --images-file "$list" --source-registry "$SRC" --source-insecure \
    --registry "$DST2/mirror" --insecure >/dev/null 2>&1
}
t0=$(now); skopeo_run; t1=$(now); skopeo_run; t2=$(now)
snowctl_run; t3=$(now); snowctl_run; t4=$(now)
python3 - "$t0" "$t1" "$t2" "$t3" "$t4" <<'PY'
import sys
t0, t1, t2, t3, t4 = map(float, sys.argv[1:])
sk1, sk2, sn1, sn2 = t1 - t0, t2 - t1, t3 - t2, t4 - t3
print(f"skopeo  first {sk1:6.2f} s  re-run {sk2:6.2f} s")
print(f"snowctl first {sn1:6.2f} s  re-run {sn2:6.2f} s")
print(f"first copy: snowctl is {sk1 / sn1:.2f}x skopeo's speed; re-run: {sk2 / sn2:.2f}x")
PY

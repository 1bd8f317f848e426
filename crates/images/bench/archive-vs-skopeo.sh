#!/usr/bin/env bash
# Benchmark: the disconnected-site archive against skopeo, side by side in one run, on loopback.
#   crates/images/bench/archive-vs-skopeo.sh [BINARY]
# BINARY is the library's example `archive` (default target/release/examples/archive; build it
# with `cargo build --release --workspace --example archive`: the same download and import as
# `snowctl download artifacts` / `snowctl import-images --from`). An example links its crate's
# dev-dependencies, and snow-images' test harness (snow-test-devices) links snow-validate, so
# that build compiles aws-sdk-ec2 in release too; the example itself never calls it.
# Needs docker-registry, skopeo and python3.
#
# Two image sets, each of IMAGES images (default 20):
#   distinct: 3 random layers of LAYER_KB each (2.5 MB × 3; random, so incompressible);
#   shared:   the same 2 base layers in every image plus 1 random layer of its own.
# For each set:
#   download: `skopeo copy docker://SRC/… oci:DIR:REF` image by image (one layout, so skopeo too
#             stores a shared blob once) against `archive download` (one OCI-layout tar);
#             sizes: the archive against the sum of the distinct blobs (skopeo's blobs/ directory);
#   import:   `skopeo copy oci:DIR:REF docker://DST1/…` image by image against
#             `archive import FILE DST2`, first time and a re-run with nothing new.
set -euo pipefail
BIN=${1:-target/release/examples/archive}
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
now() { date +%s.%N; }
SRC=127.0.0.1:$(port); start src "${SRC#*:}"

# OCI layouts with random layers, loaded into the source with skopeo (not timed).
python3 - "$work/layouts" "$IMAGES" "$LAYER_KB" <<'PY'
import hashlib, json, os, sys
root, n, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
base = [os.urandom(kb * 1024) for _ in range(2)]
for kind in ("distinct", "shared"):
    for i in range(n):
        d = os.path.join(root, kind, f"img{i}"); b = os.path.join(d, "blobs", "sha256"); os.makedirs(b)
        def put(data):
            h = hashlib.sha256(data).hexdigest(); open(os.path.join(b, h), "wb").write(data); return "sha256:" + h, len(data)
        datas = [os.urandom(kb * 1024) for _ in range(3)] if kind == "distinct" else base + [os.urandom(kb * 1024)]
        layers = [put(x) for x in datas]
        cfg = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": [l[0] for l in layers]}, "config": {}, "n": f"{kind}{i}"}).encode()
        c = put(cfg)
        m = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": c[0], "size": c[1]},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": l[0], "size": l[1]} for l in layers]}).encode()
        md = put(m)
        json.dump({"schemaVersion": 2, "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": md[0], "size": md[1], "annotations": {"org.opencontainers.image.ref.name": "v1"}}]}, open(os.path.join(d, "index.json"), "w"))
        open(os.path.join(d, "oci-layout"), "w").write('{"imageLayoutVersion":"1.0.0"}')
PY
for kind in distinct shared; do
  for i in $(seq 0 $((IMAGES - 1))); do
    skopeo copy -q --insecure-policy --dest-tls-verify=false "oci:$work/layouts/$kind/img$i:v1" "docker://$SRC/$kind/img$i:v1"
    echo "public.ecr.aws/$kind/img$i:v1" >>"$work/$kind.txt"
  done
done

for kind in distinct shared; do
  DST1=127.0.0.1:$(port); start "dst1-$kind" "${DST1#*:}"
  DST2=127.0.0.1:$(port); start "dst2-$kind" "${DST2#*:}"
  dir="$work/skopeo-$kind"; file="$work/$kind.tar"
  t0=$(now)
  for i in $(seq 0 $((IMAGES - 1))); do
    skopeo copy -q --insecure-policy --src-tls-verify=false "docker://$SRC/$kind/img$i:v1" "oci:$dir:public.ecr.aws/$kind/img$i:v1"
  done
  t1=$(now)
  "$BIN" download "$work/$kind.txt" "$SRC" "$file" >/dev/null
  t2=$(now)
  unique=$(du -sb --apparent-size "$dir/blobs" | cut -f1)
  archive=$(stat -c %s "$file")
  skopeo_import() {
    for i in $(seq 0 $((IMAGES - 1))); do
      skopeo copy -q --insecure-policy --dest-tls-verify=false "oci:$dir:public.ecr.aws/$kind/img$i:v1" "docker://$DST1/mirror/$kind/img$i:v1"
    done
  }
  t3=$(now); skopeo_import; t4=$(now); skopeo_import; t5=$(now)
  "$BIN" import "$file" "$DST2/mirror" >/dev/null; t6=$(now)
  "$BIN" import "$file" "$DST2/mirror" >/dev/null; t7=$(now)
  python3 - "$kind" "$t0" "$t1" "$t2" "$t3" "$t4" "$t5" "$t6" "$t7" "$unique" "$archive" <<'PY'
import sys
kind = sys.argv[1]
t = list(map(float, sys.argv[2:10])); unique, archive = int(sys.argv[10]), int(sys.argv[11])
sk_dl, sn_dl = t[1] - t[0], t[2] - t[1]
sk_im1, sk_im2, sn_im1, sn_im2 = t[4] - t[3], t[5] - t[4], t[6] - t[5], t[7] - t[6]
print(f"[{kind}] download: skopeo {sk_dl:6.2f} s, snowctl {sn_dl:6.2f} s -> {sk_dl / sn_dl:.2f}x")
print(f"[{kind}] archive {archive} bytes, distinct blobs {unique} bytes (+{archive - unique} tar headers, index, end)")
print(f"[{kind}] import first: skopeo {sk_im1:6.2f} s, snowctl {sn_im1:6.2f} s -> {sk_im1 / sn_im1:.2f}x")
print(f"[{kind}] import re-run: skopeo {sk_im2:6.2f} s, snowctl {sn_im2:6.2f} s -> {sk_im2 / sn_im2:.2f}x")
PY
done

// Batched matmul out[z] = A[z] (M x K) @ B[z] (K x N), with no workgroup memory: each invocation
// computes an RM x RN register block of the output, reading its RM rows of A and RN columns of B
// straight from storage (through strides: transposed operands need no copy, broadcast batch dims
// have stride 0). On the software adapters (lavapipe, SwiftShader) every invocation is a SIMD lane
// and workgroup memory costs as much as storage plus a barrier; what counts is the loads per
// multiply-add, (RM + RN) per RM * RN here. Consecutive invocations take consecutive column
// blocks, so on a GPU the B loads coalesce and the A loads are shared by neighbours.
// The loads (linalg_block.py) read one K step of 4 with vec4 accesses where an operand is
// contiguous along the dimension read (A along K or M, B along N or K), scalar strided ones
// elsewhere; rows and columns past the edge read the last one (clamped; never stored). Results
// are stored through put / put_vec (linalg_epilogue.py: the identity or a fused epilogue).
// One dispatch covers K from k_begin to at most k_begin + K_CHUNK (linalg.py), adding to the output
// when k_begin > 0. Loop bounds per invocation: the batch rank (batch_offsets), K_CHUNK / 4 K steps, 3 tail steps;
// no workgroup memory, no barrier.
alias T = ${T};
alias V = vec4<${T}>;

fn a_at(i: i32) -> T { return ${A_AT}; }
fn b_at(i: i32) -> T { return ${B_AT}; }
${PUT}
${BATCH_OFFSETS}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let M = ui(U_m);
    let N = ui(U_n);
    let K = ui(U_k);
    let nbn = (N + ${RN}u - 1u) / ${RN}u;
    let id = wid.x * 64u + lid;
    if (id >= nbn * ((M + ${RM}u - 1u) / ${RM}u)) { return; }
    let m0 = (id / nbn) * ${RM}u;
    let n0 = (id % nbn) * ${RN}u;
    let k_begin = ${K_BEGIN};                    // 0u when K <= K_CHUNK: one dispatch, as a plain matmul
    let k_end = min(K, k_begin + ${K_CHUNK}u);
    let offsets = batch_offsets(wid.z);
    let aoff = offsets.x;
    let boff = offsets.y;
    let sam = ii(U_sa);
    let sak = ii(U_sa + 1u);
    let sbk = ii(U_sb);
    let sbn = ii(U_sb + 1u);
${SETUP}
    var k = k_begin;
    for (; k + 4u <= k_end; k += 4u) {           // at most K_CHUNK / 4 times
        let ki = i32(k);
${LOADS}
${FMAS}
    }
    for (; k < k_end; k++) {                    // at most 3 times
        let ki = i32(k);
${TAIL}
    }
    let ooff = wid.z * M * N;
    let later = ${LATER};
${STORE}
}

# Makes bench/data/dace_chain10_b128.sdfg with DaCe's own API (DaCe 2.0.0a6, ../shared/third_party):
# 10 elementwise GPU maps b = 2a + 1 over float64[N] through 9 GPU transients, gpu_block_size 128.
#   source ../shared/third_party/env.sh; /usr/bin/python3 bench/data/make_dace_chain.py bench/data/dace_chain10_b128.sdfg
import dace, sys
N = dace.symbol('N', dtype=dace.int64)
sdfg = dace.SDFG('dace_chain10')
sdfg.add_symbol('N', dace.int64)
sdfg.add_array('t0', [N], dace.float64, storage=dace.StorageType.GPU_Global)
sdfg.add_array('t10', [N], dace.float64, storage=dace.StorageType.GPU_Global)
for i in range(1, 10):
    sdfg.add_transient(f't{i}', [N], dace.float64, storage=dace.StorageType.GPU_Global)
st = sdfg.add_state('chain')
prev = st.add_read('t0')
for i in range(10):
    nxt = st.add_write(f't{i+1}') if i == 9 else st.add_access(f't{i+1}')
    st.add_mapped_tasklet(f'map{i}', dict(j='0:N'), dict(a=dace.Memlet(f't{i}[j]')), 'b = a * 2.0 + 1.0',
                          dict(b=dace.Memlet(f't{i+1}[j]')), schedule=dace.ScheduleType.GPU_Device,
                          input_nodes={f't{i}': prev}, output_nodes={f't{i+1}': nxt}, external_edges=True)
    prev = nxt
for n in st.nodes():
    if isinstance(n, dace.nodes.MapEntry):
        n.map.gpu_block_size = [128, 1, 1]
sdfg.validate()
sdfg.save(sys.argv[1])

/** ScProbe (peers/sc.idl): echo returns its argument; the interceptors do the rest. */
final class ScProbeImpl extends ScProbePOA {
    @Override
    public String echo(String s) {
        return s;
    }
}

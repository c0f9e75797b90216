# latency.gp: bench/run.sh's plot of latency per variant.
#   gnuplot -e "datafile='plot.dat'; outfile='latency.png'" bench/latency.gp
# plot.dat columns: idx "label" p10 p25 median p75 p90 mean p99 (µs)
set terminal pngcairo size 1100,560 font "sans,10"
set output outfile
stats datafile using 1 nooutput
set title "zklock: latency of one uncontended lock+unlock cycle (pooled over rounds)"
set ylabel "µs per cycle (log scale)"
set logscale y
set yrange [20:*]
set grid ytics mytics
set xrange [-0.6:STATS_max + 0.6]
set boxwidth 0.5
set style fill solid 0.35 border -1
set xtics rotate by -25 nomirror
set key top left
plot datafile using 1:4:3:7:6:xtic(2) with candlesticks whiskerbars lc rgb "#3060a0" title "p10 / p25 / p75 / p90", \
     '' using 1:5:5:5:5 with candlesticks lc rgb "#102040" lw 2 notitle, \
     '' using 1:8 with points pt 2 ps 1.3 lc rgb "#c03020" title "mean", \
     '' using 1:9 with points pt 6 ps 1.0 lc rgb "#606060" title "p99", \
     '' using 1:5:(sprintf("%.0f", $5)) with labels offset 3.2,0.6 font "sans,9" notitle

/* Reverse Cuthill-McKee renumbering of a simplex mesh's nodes.
 *
 * The node adjacency graph (two nodes are adjacent if a cell holds both) is
 * built from the node -> cell incidence with a marker array per thread. The
 * nodes are then counting-sorted by degree, and the adjacency lists rebuilt
 * by scattering the nodes in that order: every list comes out sorted by
 * degree (ties by the degree order), which is the order Cuthill-McKee visits
 * neighbours in, with no per-node sort. Each connected component starts from
 * a pseudo-peripheral node (George-Liu: repeat BFS from a minimum-degree
 * node of the deepest level while the eccentricity grows). Everything is
 * O(cells + adjacency entries). */
#include <inttypes.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "disc/p1/mesh_internal.h"

typedef struct {
  int64_t n;
  int64_t *off; /* n+1 */
  int64_t *adj; /* off[n]: neighbours, each list sorted by degree */
  int64_t *deg; /* n */
  int64_t *order; /* n: the nodes by increasing degree */
} graph;

static void graph_free(graph *g) {
  hpmg_free(&g->off);
  hpmg_free(&g->adj);
  hpmg_free(&g->deg);
  hpmg_free(&g->order);
}

/* Node -> cell incidence in CSR form. */
static hpmg_error incidence(const hpmg_p1_mesh *m, int64_t **ioff, int64_t **icell) {
  const int nv = m->dim + 1;
  const int64_t n = m->num_nodes, nc = m->num_cells;
  HPMG_CALL(hpmg_calloc((size_t)(n + 1) * 8, ioff));
  int64_t *off = *ioff;
  for (int64_t i = 0; i < nc * nv; i++) off[m->cell_nodes[i] + 1]++;
  for (int64_t i = 0; i < n; i++) off[i + 1] += off[i];
  hpmg_error e = hpmg_malloc((size_t)(off[n] > 0 ? off[n] : 1) * 8, icell);
  if (e) {
    hpmg_free(ioff);
    return e;
  }
  /* fill by shifting each start, then shift back */
  for (int64_t c = 0; c < nc; c++)
    for (int k = 0; k < nv; k++) (*icell)[off[m->cell_nodes[nv * c + k]]++] = c;
  for (int64_t i = n; i > 0; i--) off[i] = off[i - 1];
  off[0] = 0;
  return HPMG_SUCCESS;
}

/* Unique neighbours of every node: counts (fill = 0) or lists (fill = 1). */
static void neighbours(const hpmg_p1_mesh *m, const int64_t *ioff, const int64_t *icell,
                       int64_t *mark_all, int64_t *off, int64_t *adj, int fill) {
  const int nv = m->dim + 1;
  const int64_t n = m->num_nodes;
#pragma omp parallel
  {
    int64_t *mark = mark_all + (int64_t)omp_get_thread_num() * n;
    for (int64_t i = 0; i < n; i++) mark[i] = -1;
#pragma omp for schedule(dynamic, 4096)
    for (int64_t v = 0; v < n; v++) {
      int64_t cnt = 0, *out = fill ? adj + off[v] : NULL;
      mark[v] = v;
      for (int64_t j = ioff[v]; j < ioff[v + 1]; j++) {
        const int64_t *cn = m->cell_nodes + nv * icell[j];
        for (int k = 0; k < nv; k++) {
          int64_t w = cn[k];
          if (mark[w] != v) {
            mark[w] = v;
            if (fill) out[cnt] = w;
            cnt++;
          }
        }
      }
      if (!fill) off[v + 1] = cnt;
    }
  }
}

static hpmg_error build_graph(const hpmg_p1_mesh *m, graph *g) {
  const int64_t n = m->num_nodes;
  int64_t *ioff = NULL, *icell = NULL, *mark = NULL, *off = NULL, *adj = NULL;
  memset(g, 0, sizeof *g);
  g->n = n;
  hpmg_error e = incidence(m, &ioff, &icell);
  if (!e) e = hpmg_malloc((size_t)omp_get_max_threads() * (size_t)(n > 0 ? n : 1) * 8, &mark);
  if (!e) e = hpmg_calloc((size_t)(n + 1) * 8, &off);
  if (!e) {
    neighbours(m, ioff, icell, mark, off, NULL, 0);
    for (int64_t i = 0; i < n; i++) off[i + 1] += off[i];
    e = hpmg_malloc((size_t)(off[n] > 0 ? off[n] : 1) * 8, &adj);
  }
  if (!e) neighbours(m, ioff, icell, mark, off, adj, 1);
  hpmg_free(&mark);
  hpmg_free(&icell);
  hpmg_free(&ioff);
  /* degrees, nodes counting-sorted by degree, lists rebuilt in that order */
  int64_t *pos = NULL, maxdeg = 0;
  if (!e) e = hpmg_calloc((size_t)(n > 0 ? n : 1) * 8, &g->deg);
  if (!e) e = hpmg_malloc((size_t)(n > 0 ? n : 1) * 8, &g->order);
  if (!e) e = hpmg_malloc((size_t)(off[n] > 0 ? off[n] : 1) * 8, &g->adj);
  if (!e) {
    for (int64_t v = 0; v < n; v++) {
      g->deg[v] = off[v + 1] - off[v];
      if (g->deg[v] > maxdeg) maxdeg = g->deg[v];
    }
    e = hpmg_calloc((size_t)(maxdeg + 2 > n + 1 ? maxdeg + 2 : n + 1) * 8, &pos);
  }
  if (!e) {
    for (int64_t v = 0; v < n; v++) pos[g->deg[v] + 1]++;
    for (int64_t d = 0; d <= maxdeg; d++) pos[d + 1] += pos[d];
    for (int64_t v = 0; v < n; v++) g->order[pos[g->deg[v]]++] = v;
    /* pos now: the next free slot of each node's list */
    memcpy(pos, off, (size_t)n * 8);
    for (int64_t r = 0; r < n; r++) {
      int64_t u = g->order[r];
      for (int64_t j = off[u]; j < off[u + 1]; j++) g->adj[pos[adj[j]]++] = u;
    }
  }
  hpmg_free(&pos);
  hpmg_free(&adj);
  g->off = off;
  if (e) graph_free(g);
  return e;
}

/* BFS from root over unnumbered nodes (num[v] < 0); fills queue with the
 * component in level order, returns its size; *depth = number of levels,
 * *last = first index in queue of the last level. level[] is scratch (-1
 * everywhere on entry and on return). */
static int64_t bfs(const graph *g, const int64_t *num, int64_t root, int64_t *queue, int64_t *level,
                   int64_t *depth, int64_t *last) {
  int64_t head = 0, tail = 0;
  queue[tail++] = root;
  level[root] = 0;
  *last = 0;
  while (head < tail) {
    int64_t v = queue[head++];
    for (int64_t j = g->off[v]; j < g->off[v + 1]; j++) {
      int64_t w = g->adj[j];
      if (level[w] < 0 && num[w] < 0) {
        level[w] = level[v] + 1;
        queue[tail++] = w;
      }
    }
  }
  *depth = level[queue[tail - 1]] + 1;
  for (int64_t i = tail - 1; i >= 0 && level[queue[i]] == *depth - 1; i--) *last = i;
  for (int64_t i = 0; i < tail; i++) level[queue[i]] = -1;
  return tail;
}

static int64_t pseudo_peripheral(const graph *g, const int64_t *num, int64_t root, int64_t *queue,
                                 int64_t *level) {
  int64_t depth, last;
  int64_t size = bfs(g, num, root, queue, level, &depth, &last);
  for (int it = 0; it < 64; it++) {
    int64_t best = queue[last];
    for (int64_t i = last + 1; i < size; i++)
      if (g->deg[queue[i]] < g->deg[best]) best = queue[i];
    int64_t d2, l2;
    bfs(g, num, best, queue, level, &d2, &l2);
    if (d2 <= depth) break;
    root = best;
    depth = d2;
    last = l2;
  }
  return root;
}

hpmg_error hpmg_p1_mesh_renumber(hpmg_p1_mesh *m, int64_t *perm) {
  HPMG_CHECK_ARG(m && (m->dim == 2 || m->dim == 3), "p1 renumber: mesh is NULL or has dim %d",
                 m ? m->dim : 0);
  const int64_t n = m->num_nodes;
  if (n == 0) return HPMG_SUCCESS;
  const int nv = m->dim + 1;
  for (int64_t i = 0; i < m->num_cells * nv; i++)
    HPMG_CHECK_ARG(m->cell_nodes[i] >= 0 && m->cell_nodes[i] < n,
                   "p1 renumber: cell %" PRId64 " uses node %" PRId64 ", outside 0..%" PRId64,
                   i / nv, m->cell_nodes[i], n - 1);
  graph g;
  HPMG_CALL(build_graph(m, &g));
  int64_t *num = NULL, *queue = NULL, *level = NULL, *order = NULL, *tmp = NULL;
  hpmg_error e = hpmg_malloc((size_t)n * 8, &num);
  if (!e) e = hpmg_malloc((size_t)n * 8, &queue);
  if (!e) e = hpmg_malloc((size_t)n * 8, &level);
  if (!e) e = hpmg_malloc((size_t)n * 8, &order);
  if (!e) e = hpmg_malloc((size_t)n * 8, &tmp);
  if (e) goto done;
  for (int64_t i = 0; i < n; i++) num[i] = level[i] = -1;
  /* Cuthill-McKee: tmp[k] = k-th node visited */
  int64_t k = 0;
  /* each component starts from its lowest-degree node before the
   * pseudo-peripheral search */
  for (int64_t r = 0; r < n; r++) {
    int64_t s = g.order[r];
    if (num[s] >= 0) continue;
    s = pseudo_peripheral(&g, num, s, queue, level);
    int64_t head = k;
    tmp[k] = s;
    num[s] = k++;
    while (head < k) {
      int64_t v = tmp[head++];
      for (int64_t j = g.off[v]; j < g.off[v + 1]; j++) {
        int64_t w = g.adj[j];
        if (num[w] < 0) {
          tmp[k] = w;
          num[w] = k++;
        }
      }
    }
  }
  /* reverse: new index i holds old node tmp[n-1-i]; num becomes old -> new */
  for (int64_t i = 0; i < n; i++) order[i] = tmp[n - 1 - i];
  for (int64_t i = 0; i < n; i++) num[order[i]] = i;
  for (int64_t i = 0; i < m->num_cells * nv; i++) m->cell_nodes[i] = num[m->cell_nodes[i]];
  for (int64_t i = 0; i < m->num_facets * m->dim; i++) m->facet_nodes[i] = num[m->facet_nodes[i]];
  double *xt = (double *)queue;
  for (int d = 0; d < 3; d++) {
    if (!m->x[d]) continue;
    for (int64_t i = 0; i < n; i++) xt[i] = m->x[d][order[i]];
    memcpy(m->x[d], xt, (size_t)n * 8);
  }
  if (m->node_tag) {
    for (int64_t i = 0; i < n; i++) tmp[i] = m->node_tag[order[i]];
    memcpy(m->node_tag, tmp, (size_t)n * 8);
  }
  if (perm) memcpy(perm, order, (size_t)n * 8);
done:
  hpmg_free(&num);
  hpmg_free(&queue);
  hpmg_free(&level);
  hpmg_free(&order);
  hpmg_free(&tmp);
  graph_free(&g);
  return e;
}

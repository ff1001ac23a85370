from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.report.html import write_report

    tables = {name: snakemake.input[name] for name in snakemake.params.tables}
    write_report(snakemake.output[0], snakemake.input.summary, tables, snakemake.input.figures,
                 snakemake.params.captions, dict(snakemake.config), snakemake.params.workflow_dir,
                 snakemake.params.benchmarks, snakemake.input.provenance)

"""Chinese and Japanese templates of the long-session generator (written for this harness).

Same rules as :mod:`proxy.evaluation.topics_en`: questions paraphrase ("公司网络隧道"
for "VPN", "電波がないとき" for "オフライン時"), distractors share words and differ in
entity, condition or unit. Chinese is simplified; Japanese mixes kana, kanji and
Latin product names as engineers write them.
"""

from __future__ import annotations

from proxy.evaluation.topics import CliPref, TaskSet, Topic

FACTS = (
    Topic("fact", "zh", "测试环境的数据库端口是{v}，只有连上VPN才能访问。",
          ("我接入公司网络隧道以后，预发布的库要连哪个端口？",),
          concept="db_port", needle="{v}", context="VPN", values=(5400, 9800, 7),
          noise=("生产环境的数据库端口是{d}，在负载均衡后面。",
                 "测试环境的缓存端口是{d}，不需要VPN。")),
    Topic("fact", "zh", "免费用户上传附件的上限是{v}MB。",
          ("不付费的人最多能传多大的文件？",),
          concept="upload_limit", needle="{v}MB", context="免费", values=(5, 95, 5),
          noise=("企业用户上传附件的上限是{d}MB。", "免费用户最多可以建{d}个项目。")),
    Topic("fact", "zh", "离线时接口的超时时间是{v}秒。",
          ("断网的情况下，请求等多久会放弃？",),
          concept="offline_timeout", needle="{v}秒", context="离线", values=(5, 120, 5),
          noise=("在线时接口的超时时间是{d}秒。", "离线时最多缓存{d}条消息。")),
    Topic("fact", "zh", "夜间备份保留{v}天。",
          ("每天晚上做的快照我们存多久？",),
          concept="nightly_backup", needle="{v}天", context="夜间", values=(7, 90, 1),
          noise=("每周备份保留{d}周。", "夜间任务会清理{d}天以前的日志。")),
    Topic("fact", "zh", "批处理模式下，每个渲染进程分配{v}GB内存。",
          ("做批量出图的时候，单个进程能用多少内存？",),
          concept="render_ram", needle="{v}GB", context="批处理", values=(2, 64, 2),
          noise=("每个接口进程分配{d}GB内存。", "批处理模式最多启动{d}个渲染进程。")),
)

DECISIONS = (
    Topic("decision", "zh", "我们决定用{v}做服务之间的消息队列。",
          ("后端之间传事件，最后选的是哪个中间件？",),
          concept="event_bus", values=("NATS", "Kafka", "RabbitMQ", "Pulsar"),
          noise=("数据团队自己用{d}做埋点管道。",)),
    Topic("decision", "zh", "我们决定把前端部署在{v}上。",
          ("网页界面最终放在哪个平台托管？",),
          concept="frontend_host", values=("Netlify", "Vercel", "Cloudflare Pages", "Render"),
          noise=("文档站部署在{d}上。",)),
)

CHAINS = (
    Topic("chain", "zh", "构建缓存的过期时间是{v}小时。",
          ("编译产物缓存现在多久失效？",),
          needle="{v}小时", context="构建缓存", values=(2, 72, 1),
          fixes=("更正：构建缓存的过期时间是{v}小时。", "其实构建缓存的过期时间应该是{v}小时。"),
          noise=("镜像缓存的过期时间是{d}小时。",)),
    Topic("chain", "zh", "预发布集群有{v}个节点。",
          ("上线前验证用的那套环境现在有几台机器？",),
          concept="staging_nodes", needle="{v}个节点", context="预发布", values=(3, 40, 1),
          fixes=("不对，预发布集群是{v}个节点。", "更正：扩容以后预发布集群有{v}个节点。"),
          noise=("生产集群有{d}个节点。",)),
)

PREFS = (
    Topic("pref_chat", "zh", "我喜欢回答先给结论，再给细节。",
          ("我希望你的回复按什么顺序组织？",), needle="先给结论"),
    Topic("pref_chat", "zh", "代码注释请一律用英文写。",
          ("源码里的说明文字应该用哪种语言？",), concept="comment_lang", needle="用英文"),
)

CLI_PREFS = (
    CliPref("zh", "reply_language", "回复语言", "用简体中文回答，技术名词保留英文", "简体中文",
            "你应该用什么文字回复我？"),
)

TASK_SETS = (
    TaskSet("zh",
            "目标：把报表服务迁到新的集群",
            "目标：月底前把报表服务和告警服务都迁到新的集群",
            ("待办：导出旧集群的配置", "待办：给迁移写回滚脚本", "待办：更新值班手册"),
            "进展：旧集群的配置已经导出，完成。",
            "阻塞：新集群的网络策略还没批下来",
            "告警服务", "把报表服务迁到新的集群", "网络策略",
            ("导出旧集群的配置", "回滚脚本", "值班手册"),
            "提醒我一下，这项工作现在的最终目的是什么？",
            "眼下有什么事情卡住我们了吗？"),
)

FACTS_JA = (
    Topic("fact", "ja", "ステージングのDBはVPN接続時にポート{v}で待ち受けています。",
          ("社内トンネルに繋いでいるとき、検証用データベースには何番に接続すればいい？",),
          concept="db_port", needle="{v}", context="VPN", values=(5400, 9800, 7),
          noise=("本番のDBはロードバランサの裏でポート{d}を使っています。",
                 "ステージングのキャッシュはポート{d}で、VPNは不要です。")),
    Topic("fact", "ja", "無料プランのアップロード上限は{v}MBです。",
          ("お金を払っていない利用者は、どれくらいの大きさのファイルまで送れますか？",),
          concept="upload_limit", needle="{v}MB", context="無料", values=(5, 95, 5),
          noise=("法人プランのアップロード上限は{d}MBです。",
                 "無料プランで作れるプロジェクトは{d}個までです。")),
    Topic("fact", "ja", "オフライン時のAPIタイムアウトは{v}秒です。",
          ("電波がないとき、リクエストは何秒待って諦める？",),
          concept="offline_timeout", needle="{v}秒", context="オフライン", values=(5, 120, 5),
          noise=("オンライン時のAPIタイムアウトは{d}秒です。",
                 "オフライン時は最大{d}件までキューに溜めます。")),
    Topic("fact", "ja", "夜間バックアップは{v}日間保存します。",
          ("毎晩のスナップショットはどのくらいの期間残しておく？",),
          concept="nightly_backup", needle="{v}日間", context="夜間", values=(7, 90, 1),
          noise=("週次バックアップは{d}週間保存します。",
                 "夜間ジョブは{d}日より古いログを消します。")),
)

DECISIONS_JA = (
    Topic("decision", "ja", "メッセージキューには{v}を使うことに決めました。",
          ("サービス間のイベント配送には、結局どのブローカーを採用した？",),
          concept="event_bus", values=("NATS", "Kafka", "RabbitMQ", "Pulsar"),
          noise=("分析チームは独自に{d}を使っています。",)),
    Topic("decision", "ja", "モバイルアプリのローカル保存には{v}を採用すると決めました。",
          ("スマホ版の端末内データベースは何を選んだんだっけ？",),
          concept="mobile_store", values=("SQLite", "Realm", "LevelDB", "ObjectBox"),
          noise=("デスクトップ版は{d}にキャッシュしています。",)),
)

CHAINS_JA = (
    Topic("chain", "ja", "ログの保存期間は{v}日です。",
          ("記録ファイルは今、何日間保持する設定になっている？",),
          needle="{v}日", context="ログ", values=(7, 180, 1),
          fixes=("訂正：ログの保存期間は{v}日です。", "実は、ログの保存期間は{v}日が正しいです。"),
          noise=("監査ログの保存期間は{d}年です。",)),
    Topic("chain", "ja", "検証環境のノード数は{v}台です。",
          ("リリース前に試す環境は、いま何台のマシンで動いている？",),
          concept="staging_nodes", needle="{v}台", context="検証環境", values=(3, 40, 1),
          fixes=("いいえ、検証環境は{v}台です。", "訂正：増設後の検証環境は{v}台です。"),
          noise=("本番環境のノード数は{d}台です。",)),
)

PREFS_JA = (
    Topic("pref_chat", "ja", "説明は箇条書きでお願いしたいです。",
          ("私が好む回答の形式は？",), needle="箇条書き"),
    Topic("pref_chat", "ja", "コードのコメントは英語で書いてください。",
          ("ソース内の注記はどの言語にするべき？",), concept="comment_lang", needle="英語"),
)

CLI_PREFS_JA = (
    CliPref("ja", "reply_style", "返答スタイル", "敬語は不要、短く答えてください", "敬語は不要",
            "私への返事はどんな口調と長さがいい？"),
)

TASK_SETS_JA = (
    TaskSet("ja",
            "目標：ログ基盤を新しいクラスタへ移行する",
            "目標：月末までにログ基盤と監視基盤を新しいクラスタへ移行する",
            ("TODO: 旧クラスタの設定をエクスポートする", "TODO: 移行のロールバック手順を書く",
             "TODO: 当番表を更新する"),
            "進捗：旧クラスタの設定のエクスポートは完了。",
            "ブロッカー：新クラスタのネットワーク許可がまだ下りていない",
            "監視基盤", "ログ基盤を新しいクラスタへ移行する", "ネットワーク許可",
            ("設定をエクスポート", "ロールバック手順", "当番表"),
            "この作業の最終的な狙いは、今のところ何だっけ？",
            "いま何かに足止めされていますか？"),
)
